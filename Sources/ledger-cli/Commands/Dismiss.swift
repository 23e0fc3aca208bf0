import ActionLedger
import ArgumentParser

struct Dismiss: LedgerSubcommand {
    static let configuration = CommandConfiguration(abstract: "Dismiss an action (a final decision; no taps needed).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var action: ActionOptions

    @Option(help: "Why it was dismissed (recorded in the audit).")
    var reason = ""

    func execute() throws {
        guard reason.utf8.count <= 4096 else { throw LedgerError(.invalidInput, "--reason is longer than 4096 bytes") }
        try action.run(.dismiss(actionId: action.action, device: action.device, reason: reason), global: global)
    }
}
