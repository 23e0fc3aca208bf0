import ActionLedger
import ArgumentParser

struct Dismiss: LedgerSubcommand {
    static let configuration = CommandConfiguration(abstract: "Dismiss an action (a final decision; no taps needed).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var action: ActionOptions

    @Option(help: "Why it was dismissed (recorded in the audit).")
    var reason = ""

    func execute() throws {
        try action.run(.dismiss(actionId: action.action, device: action.device, reason: reason), global: global)
    }
}
