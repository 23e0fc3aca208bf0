import ActionLedger
import ArgumentParser

struct Expire: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Record that a pending action passed its expires_at (action.expired, by system:policy).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The action id.")
    var action: String

    @Option(name: .customLong("command-id"), help: "Idempotency key.")
    var commandId: String?

    func execute() throws {
        try CommandRunner.run(.expire(actionId: action), commandId: commandId, actor: Event.systemPolicyActor, global: global)
    }
}
