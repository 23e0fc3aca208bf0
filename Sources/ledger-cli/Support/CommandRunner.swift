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
    /// Refuses `value` of `option` unless it is an identifier, before any store is opened.
    static func requireIdentifier(_ value: String?, option: String, field: String) throws {
        guard let value, let problem = Identifier.problem(value) else { return }
        throw LedgerError(.invalidInput, "\(option) \(problem)", details: ["field": .string(field)])
    }

    /// Refuses free text (a specialist's name, an actor) that is empty or longer than the
    /// events hold: a query for it could only answer nothing, as if there were nothing to find.
    static func requireText(_ value: String, option: String, field: String, max: Int) throws {
        guard value.isEmpty || value.utf8.count > max else { return }
        throw LedgerError(.invalidInput, "\(option) " + (value.isEmpty ? "must not be empty" : "is longer than \(max) bytes"),
                          details: ["field": .string(field)])
    }

    /// Refuses a name a query looks for (a person, a device, an action, a surface) that no
    /// event can hold: empty, or longer than an identifier. Its characters are not judged:
    /// ids stored before the identifier rules stay readable (events.md).
    static func requireName(_ value: String?, option: String, field: String) throws {
        guard let value else { return }
        try requireText(value, option: option, field: field, max: 128)
    }

    /// Refuses, before any store is opened, a command naming an action, device, person or
    /// org that is no identifier, naming its option (Specs/cli.md).
    static func requireIdentifiers(_ command: Command) throws {
        guard let (field, problem) = command.identifierProblem else { return }
        let option = field == "action_id" ? "the action id" : "--\(field)"
        throw LedgerError(.invalidInput, "\(option) \(problem)", details: ["field": .string(field)])
    }

    /// Opens the ledger for writing, runs `command` at the engine clock and prints the result.
    /// The actor and a policy's org are identifiers like every other id (Specs/events.md):
    /// checked here, before the store is opened, so nothing is written on a bad one.
    static func run(_ command: Command, commandId: String?, actor: String = "operator", global: GlobalOptions,
                    proof: ((Ledger, Timestamp) throws -> ProofInput)? = nil) throws {
        try requireIdentifier(actor, option: "--actor", field: "actor")
        try requireIdentifiers(command)
        try requireIdentifier(commandId, option: "--command-id", field: "command_id")
        let ledger = try global.open(write: true)
        let now = try global.now(ledger)
        let result = try ledger.execute(CommandRequest(command, commandId: commandId, now: now, actor: actor,
                                                       proof: try proof?(ledger, now)))
        try ResultPrinter.print(result, ledger: ledger, now: now, json: global.json)
    }
}
