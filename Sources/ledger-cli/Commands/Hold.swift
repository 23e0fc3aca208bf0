import ActionLedger
import ArgumentParser

struct Hold: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Snooze an action: it leaves the Today feed until TIME, and can still be approved or dismissed.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var action: ActionOptions

    @Option(help: "ISO-8601 time it comes back.")
    var until: String

    func execute() throws {
        let t = try Clock.parse(until, option: "--until")
        try action.run(.hold(actionId: action.action, device: action.device, until: t), global: global)
    }
}
