import ActionLedger
import ArgumentParser

struct AuditAction: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "action", abstract: "An action's whole lifecycle: who did what, from which device, under which policy.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var time: NowOption
    @OptionGroup var format: CSVOption

    @Argument(help: "The action id.")
    var action: String

    func execute() throws {
        try CommandRunner.requireName(action, option: "the action id", field: "action_id")
        let ledger = try global.open(write: false)
        let now = try time.resolve(global, ledger)
        let trail = try ledger.query { try $0.auditAction(action, now: now) }
        let proofs = try ledger.proofSummaries(trail.trail.map(\.seq))
        if global.json {
            guard case .object(var o) = trail.json else { return }
            o["trail"] = AuditPrinter.json(trail.trail, proofs)
            Output.json(.object(o))
        } else if format.csv {
            AuditPrinter.csv(trail.trail, proofs)
        } else {
            Human.line("\(trail.actionId): \(trail.state)")
            for e in trail.trail { Human.line("  " + AuditPrinter.line(e, proofs[e.seq])) }
        }
    }
}
