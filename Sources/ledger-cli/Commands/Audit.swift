import ArgumentParser

struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Who did what: auto-ships, an action's lifecycle, by actor, device, specialist or surface.",
        subcommands: [AuditAutoshipped.self, AuditAction.self, AuditActor.self, AuditDevice.self,
                      AuditSpecialist.self, AuditSurface.self, AuditEvents.self, AuditDevices.self, AuditReplay.self,
                      AuditProofs.self])
}
