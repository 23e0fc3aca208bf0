import ActionLedger
import ArgumentParser

struct AuditDevices: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "Linked devices with platform, label, last seen (last tap) and revocation.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var format: CSVOption

    @Option(help: "Only this person's devices.")
    var person: String?

    func execute() throws {
        try CommandRunner.requireName(person, option: "--person", field: "person")
        let ledger = try global.open(write: false)
        let devices = try ledger.query { try $0.devices(person: person) }
        if global.json {
            Output.json(["count": .number(Double(devices.count)), "devices": .array(devices.map(\.json))])
        } else if format.csv {
            CSV.print(header: ["device", "person", "platform", "label", "linked_at", "last_seen", "taps", "revoked_at"],
                      rows: devices.map { d in
                          [d.device, d.person, d.platform.rawValue, d.label, d.linkedAt.iso8601, d.lastSeen?.iso8601 ?? "",
                           String(d.taps), d.revokedAt?.iso8601 ?? ""]
                      })
        } else {
            for d in devices {
                let seen = d.lastSeen.map { "last seen \($0.iso8601)" } ?? "never used"
                let state = d.revokedAt.map { "revoked \($0.iso8601)" } ?? "active"
                Human.row([d.device, d.person, d.platform.rawValue, d.label, seen, state])
            }
        }
    }
}
