import ActionLedger
import ArgumentParser

/// Options of every command a person makes on an action from a device.
struct ActionOptions: ParsableArguments {
    @Argument(help: "The action id.")
    var action: String

    @Option(help: "The device the person acts from (must be linked to her and not revoked).")
    var device: String

    @Option(name: .customLong("command-id"), help: "Idempotency key; replaying it returns the original result.")
    var commandId: String?

    /// Runs `command` on the writer and prints the result.
    func run(_ command: Command, global: GlobalOptions) throws {
        try CommandRunner.run(command, commandId: commandId, actor: "person", global: global)
    }
}

/// The options of the three taps.
struct TapOptions: ParsableArguments {
    @OptionGroup var action: ActionOptions

    @Option(name: .customLong("content-hash"),
            help: "The content hash the client showed; refused as stale_content if the action was edited since.")
    var contentHash: String?

    func seenContent() throws -> Digest? {
        guard let contentHash else { return nil }
        guard let d = Digest(hex: contentHash) else {
            throw LedgerError(.invalidInput, "--content-hash: expected 64 hex digits")
        }
        return d
    }
}
