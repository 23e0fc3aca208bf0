import ActionLedger
import ArgumentParser
import Foundation

struct AuditReplay: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-judge every recorded tap and decision with the pure policy in force at its seq.",
        discussion: """
            Streams the log once, in bounded memory. Prints events judged, decisions confirmed by \
            rule id, and exits 0; or names the first event the policy would not have produced \
            (seq, rule) and exits with replay_mismatch (23). Progress on stderr when it is a terminal. \
            Specs/integrity.md says what replay proves and what it cannot.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Judge from this seq on (earlier events are folded, not judged).")
    var from: UInt64 = 1

    func execute() throws {
        // At most 2^53 − 1, as the server takes it: a seq exact in every JSON client (a larger one printed rounded).
        guard (1...9_007_199_254_740_991).contains(from) else {
            throw LedgerError(.invalidInput, "--from must be 1…9007199254740991", details: ["field": "from"])
        }
        let ledger = try global.open(write: false)
        let terminal = isatty(2) != 0
        let started = Date()
        let report = try ledger.replayDecisions(from: from) { seq, head in
            guard terminal else { return }
            Output.stderrRaw("\r  replay: \(seq)/\(head) events (\(head == 0 ? 100 : seq * 100 / head)%)")
        }
        if terminal { Output.stderrRaw("\r\u{1B}[K") }
        let seconds = Date().timeIntervalSince(started)
        let rules = report.byRule.sorted { $0.key < $1.key }
        if global.json {
            Output.json(report.json(from: from))
        } else {
            Human.line("judged \(report.eventsJudged) events from seq \(from) in \(String(format: "%.2f", seconds)) s; "
                + "\(report.decisionsConfirmed) decisions confirmed")
            for (rule, n) in rules { Human.row(["  " + rule, String(n)]) }
        }
        if let m = report.mismatch {
            let why = m.code.map { " (the engine would refuse it: \($0))" } ?? ""
            let error = LedgerError(.replayMismatch, "seq \(m.seq) is not what the policy would have produced under rule "
                + "\(m.rule)\(why): \(m.message)", details: ["seq": .number(Double(m.seq)), "rule": .string(m.rule)])
            // With --json the report printed above is stdout's one document (its `mismatch`
            // names the event): the refusal goes to stderr only, with its exit status.
            if global.json { throw Output.fail(error, json: false) }
            throw error
        }
    }
}
