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
        let ledger = try global.open(write: true)
        let now = try global.now()
        let result = try ledger.execute(CommandRequest(.expire(actionId: action), commandId: commandId, now: now,
                                                       actor: Event.systemPolicyActor))
        try ResultPrinter.print(result, ledger: ledger, now: now, json: global.json)
    }
}
