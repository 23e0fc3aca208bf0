import ActionLedger
import ArgumentParser

struct Confirm: LedgerSubcommand {
    static let configuration = CommandConfiguration(abstract: "Tap 2 of high stakes: the creator confirmed the caption.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var tap: TapOptions

    func execute() throws {
        try tap.action.run(.tap(.confirm, actionId: tap.action.action, device: tap.action.device,
                                userVerified: false, seenContent: try tap.seenContent()), global: global)
    }
}
