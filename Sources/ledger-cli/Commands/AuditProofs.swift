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
            does not prove. The counts are the window's; the two lists are paged together, --limit \
            rows at a time in log order (default 100), each list's total printed beside it.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var time: NowOption
    @OptionGroup var window: WindowOptions

    @Option(help: "Unproven rows per page (both lists together).")
    var limit = 100

    @Option(name: .customLong("page-token"), help: "Continue after an earlier page (its next_page_token).")
    var pageToken: String?

    func execute() throws {
        let ledger = try global.open(write: false)
        let w = try window.window(now: try time.resolve(global, ledger), defaultSince: nil)
        let report = try ledger.proofReport(in: w, limit: limit, pageToken: pageToken)
        if global.json {
            Output.json(report.json)
            return
        }
        let counts = ProofLevel.allCases.map { "\($0.rawValue) \(report.byLevel[$0] ?? 0)" }.joined(separator: ", ")
        Human.line("decisions by proof level: \(counts); auto-shipped \(report.autoShipped)")
        if report.unprovenTotal == 0 {
            Human.line("no decision rests on an assertion only")
        } else if !report.unproven.isEmpty {
            Human.line("resting on assertions only (\(report.unprovenTotal)):")
            report.unproven.forEach(Self.print)
        }
        if !report.userVerificationUnproven.isEmpty {
            Human.line("signed, but user verification claimed, unproven (\(report.userVerificationUnprovenTotal)):")
            report.userVerificationUnproven.forEach(Self.print)
        }
        if let t = report.nextPageToken { Human.line("… more: --page-token \(t)") }
    }

    private static func print(_ u: ProofReport.Unproven) {
        Human.line("  #\(u.seq) \(u.at.iso8601) \(u.type.name) \(u.actionId) by \(u.person)"
            + "\(u.device.map { " on \($0)" } ?? ""): \(u.level.rawValue)")
    }
}
