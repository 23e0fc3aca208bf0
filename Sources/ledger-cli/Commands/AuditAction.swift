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
        let ledger = try global.open(write: false)
        let now = try time.resolve(global, ledger)
        let trail = try ledger.query { try $0.auditAction(action, now: now) }
        if global.json {
            Output.json(trail.json)
        } else if format.csv {
            CSV.print(header: AuditEntry.csvHeader, rows: trail.trail.map(\.csvRow))
        } else {
            Human.line("\(trail.actionId): \(trail.state)")
            for e in trail.trail { Human.line("  " + AuditPrinter.line(e)) }
        }
    }
}
