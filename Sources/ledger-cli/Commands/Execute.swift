import ActionLedger
import ArgumentParser

struct Execute: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Record the outcome of running an approved or auto-shipped action (action.executed / action.failed).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The action id.")
    var action: String

    @Flag(help: "Record a failure (action.failed) instead of success.")
    var failed = false

    @Option(help: "Outcome as a JSON object (the approving device is added as \"device\" unless given).")
    var outcome = "{}"

    @Option(name: .customLong("command-id"), help: "Idempotency key.")
    var commandId: String?

    // `operator` like every other operator command (Specs/events.md, `actor`); an executor
    // process names itself with --actor.
    @Option(help: "Who ran it (recorded as the event's actor).")
    var actor = "operator"

    func execute() throws {
        // null counts as absent (events.md), as the server's body takes it: an empty outcome.
        let parsed = try JSONParser.parse(outcome)
        let value: JSON = parsed == .null ? .object(JSONObject()) : parsed
        try CommandRunner.run(.recordOutcome(actionId: action, succeeded: !failed, outcome: value),
                              commandId: commandId, actor: actor, global: global)
    }
}
