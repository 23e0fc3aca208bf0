import ActionLedger
import ArgumentParser

struct AuditProofs: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "proofs",
        abstract: "Decisions by the proof level of the step that made them, and those resting on assertions only.",
        discussion: """
            Scans the log in the window (default all of time). Approvals and dismissals count under \
            their own event's level (none, asserted, signed, signed_uv); auto-ships are counted apart \
            (the policy decided them, no device). Decisions made by an unproven step (none or asserted) \
            are listed, and apart from them signed approvals whose claim of user verification the key \
            does not prove.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var time: NowOption
    @OptionGroup var window: WindowOptions

    func execute() throws {
        let ledger = try global.open(write: false)
        let w = try window.window(now: try time.resolve(global, ledger), defaultSince: nil)
        let report = try ledger.proofReport(in: w)
        if global.json {
            Output.json(report.json)
            return
        }
        let counts = ProofLevel.allCases.map { "\($0.rawValue) \(report.byLevel[$0] ?? 0)" }.joined(separator: ", ")
        Human.line("decisions by proof level: \(counts); auto-shipped \(report.autoShipped)")
        if report.unproven.isEmpty {
            Human.line("no decision rests on an assertion only")
        } else {
            Human.line("resting on assertions only (\(report.unproven.count)):")
            report.unproven.forEach(Self.print)
        }
        if !report.userVerificationUnproven.isEmpty {
            Human.line("signed, but user verification claimed, unproven (\(report.userVerificationUnproven.count)):")
            report.userVerificationUnproven.forEach(Self.print)
        }
    }

    private static func print(_ u: ProofReport.Unproven) {
        Human.line("  #\(u.seq) \(u.at.iso8601) \(u.type.name) \(u.actionId) by \(u.person)"
            + "\(u.device.map { " on \($0)" } ?? ""): \(u.level.rawValue)")
    }
}
