import ActionLedger
import ArgumentParser

struct Review: LedgerSubcommand {
    static let configuration = CommandConfiguration(abstract: "Tap 1 of medium and high stakes: the creator reviewed the card.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var tap: TapOptions

    func execute() throws {
        try tap.action.run(.tap(.review, actionId: tap.action.action, device: tap.action.device,
                                userVerified: false, seenContent: try tap.seenContent()), global: global)
    }
}
