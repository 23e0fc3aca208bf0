import ActionLedger
import ArgumentParser

struct Show: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Show an action: its state, the next tap it needs, and its whole event trail.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The action id.")
    var action: String

    @Option(help: "Judge holds and expiry at this ISO-8601 time (default: now).")
    var now: String?

    func execute() throws {
        try CommandRunner.requireName(action, option: "the action id", field: "action_id")
        let ledger = try global.open(write: false)
        let at = try now.map { try Clock.parse($0, option: "--now") } ?? global.now(ledger)
        let (state, events, policy) = try ledger.read { r in
            let state = try r.actionState(action)
            // The action's own org's policy: a policy.set governs its own org only.
            return (state, try r.actionEvents(action), try state.map { try r.policy(org: $0.org) } ?? r.policy())
        }
        guard let state else {
            throw LedgerError(.unknownAction, "no action \(action)", details: ["action_id": .string(action)])
        }
        if global.json {
            // The events keep their own form; each step's proof is listed beside them.
            Output.json(["action": state.json(now: at, policy: policy), "events": .array(events.map(\.json)),
                         "proofs": ProofSummary.list(events)])
            return
        }
        let p = state.proposal
        Human.line("\(state.actionId): \(p.specialist.name) (\(p.specialist.agent)) → \(p.kind) on \(p.surface) for \(state.person)")
        Human.line("  \"\(p.preview.text)\"")
        let effective = Policy.effectiveStakes(of: p, under: policy)
        Human.line("  stakes \(effective.rawValue)\(effective != p.stakes ? " (raised from \(p.stakes.rawValue))" : ""), "
            + "confidence \(p.confidence), state \(state.displayState(now: at)), "
            + (Policy.nextTap(state, under: policy, now: at).map { "next tap: \($0.rawValue)" } ?? "no tap needed"))
        Human.line("  trail:")
        for e in events { Human.line("    " + ResultPrinter.describe(e.event) + ProofColumns.human(e.event.proofSummary)) }
    }
}
