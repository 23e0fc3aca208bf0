import ActionLedger
import ArgumentParser

struct DevicesRevoke: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke a device: its taps are refused from now on.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device id.")
    var device: String

    @Option(help: "Why (recorded).")
    var reason = ""

    @Option(help: "Who revokes it (recorded as the actor).")
    var actor = "operator"

    @Option(name: .customLong("command-id"), help: "Idempotency key.")
    var commandId: String?

    func execute() throws {
        let ledger = try global.open(write: true)
        let now = try global.now()
        let result = try ledger.execute(CommandRequest(.revokeDevice(device: device, reason: reason),
                                                       commandId: commandId, now: now, actor: actor))
        try ResultPrinter.print(result, ledger: ledger, now: now, json: global.json)
    }
}
