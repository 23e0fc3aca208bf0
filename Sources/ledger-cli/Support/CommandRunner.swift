import ActionLedger
import ArgumentParser

/// The options of write commands not made from a person's device (devices, policy,
/// outcomes): who acts, and the idempotency key.
struct OperatorOptions: ParsableArguments {
    @Option(help: "Who does it (recorded as the event's actor).")
    var actor = "operator"

    @Option(name: .customLong("command-id"), help: "Idempotency key; replaying it returns the original result.")
    var commandId: String?
}

enum CommandRunner {
    /// Opens the ledger for writing, runs `command` at the engine clock and prints the result.
    static func run(_ command: Command, commandId: String?, actor: String = "operator", global: GlobalOptions) throws {
        let ledger = try global.open(write: true)
        let now = try global.now(ledger)
        let result = try ledger.execute(CommandRequest(command, commandId: commandId, now: now, actor: actor))
        try ResultPrinter.print(result, ledger: ledger, now: now, json: global.json)
    }
}
