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

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        try CommandRunner.run(.revokeDevice(device: device, reason: reason), commandId: who.commandId, actor: who.actor, global: global)
    }
}
