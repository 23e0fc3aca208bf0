import ActionLedger
import ArgumentParser

struct Today: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "What needs a person now: pending actions (high stakes first, then oldest), drafts per specialist, "
            + "and the auto-shipped card of the last 24 hours.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var time: NowOption

    @Option(help: "Whose feed.")
    var person: String

    @Option(help: "Items per page (1…1000).")
    var limit = 20

    @Option(name: .customLong("page-token"), help: "Continue after an earlier page (its next_page_token).")
    var pageToken: String?

    @Option(help: "Skip this many items first.")
    var offset = 0

    func execute() throws {
        try CommandRunner.requireName(person, option: "--person", field: "person")
        let ledger = try global.open(write: false)
        let now = try time.resolve(global, ledger)
        guard pageToken == nil || offset == 0 else { throw LedgerError(.invalidInput, "give --page-token or --offset, not both") }
        let feed = try ledger.query {
            try $0.today(TodayQuery(person: person, now: now, limit: limit, offset: offset, pageToken: pageToken))
        }
        if global.json {
            Output.json(feed.json)
            return
        }
        Human.line("\(feed.headline) (\(person), \(now.iso8601))")
        for item in feed.items {
            let p = item.proposal
            var line = "  [\(item.stakes.rawValue)] \(item.actionId): \(p.specialist.name) → \(p.kind) on \(p.surface) — "
                + "next tap: \(item.nextTap.rawValue) (\(item.tapsDone)/\(item.tapsNeeded)), confidence \(p.confidence)"
            if let e = p.expiresAt { line += ", expires \(e.iso8601)" }
            Human.line(line)
            Human.line("      \"\(p.preview.text)\" — why now: \(p.rationale)")
        }
        if let t = feed.nextPageToken { Human.line("  … more: --page-token \(t)") }
        for d in feed.drafts {
            let kinds = d.byKind.map { "\($0.count) \($0.kind)" }.joined(separator: ", ")
            Human.line("  \(d.specialist) drafted \(d.count) (\(kinds))")
        }
        let shipped = feed.autoShipped
        let kinds = shipped.byKind.map { "\($0.count) \($0.kind)" }.joined(separator: ", ")
        Human.line("  auto-shipped in the last 24h: \(shipped.count)\(kinds.isEmpty ? "" : " (\(kinds))")")
    }
}
