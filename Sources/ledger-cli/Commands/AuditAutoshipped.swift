import ActionLedger
import ArgumentParser

struct AuditAutoshipped: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "autoshipped",
        abstract: "Every auto-shipped action in a window (default: the 24 hours up to --now), with counts by kind.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var time: NowOption
    @OptionGroup var window: WindowOptions
    @OptionGroup var format: CSVOption

    @Option(help: "Only this person's auto-ships.")
    var person: String?

    func execute() throws {
        try CommandRunner.requireName(person, option: "--person", field: "person")
        let ledger = try global.open(write: false)
        let now = try time.resolve(global, ledger)
        let w = try window.window(now: now, defaultSince: Timestamp.day)
        let report = try ledger.query { try $0.autoShipped(in: w, person: person) }
        if global.json {
            Output.json(report.json)
            return
        }
        if format.csv {
            CSV.print(header: ["seq", "at", "action_id", "person", "kind", "specialist", "surface", "policy_version", "rule",
                               "confidence"],
                      rows: report.items.map { r in
                          [String(r.seq), r.at.iso8601, r.actionId, r.person, r.kind, r.specialist.name, r.surface,
                           String(r.policyVersion), r.rule, "\(r.confidence)"]
                      })
            return
        }
        let kinds = report.byKind.map { "\($0.count) \($0.kind)" }.joined(separator: ", ")
        Human.line("\(report.count) auto-shipped from \(w.from.iso8601) to \(w.to.iso8601)\(kinds.isEmpty ? "" : ": \(kinds)")")
        for r in report.items {
            Human.line("  #\(r.seq) \(r.at.iso8601) \(r.actionId) \(r.kind) on \(r.surface) by \(r.specialist.name) for \(r.person) "
                + "(policy v\(r.policyVersion), \(r.rule), confidence \(r.confidence))")
        }
    }
}
