import ActionLedger
import ArgumentParser

struct Edit: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace an action's preview text; every earlier tap on it becomes void.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var action: ActionOptions

    @Option(help: "The new preview text.")
    var text: String

    func execute() throws {
        try action.run(.edit(actionId: action.action, device: action.device, text: text), global: global)
    }
}
