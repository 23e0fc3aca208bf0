import ActionLedger
import ArgumentParser

struct Approve: LedgerSubcommand {
    static let configuration = CommandConfiguration(abstract: "The final tap: approve the action (1 tap at low stakes, after review at medium, after review and confirm at high).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var tap: TapOptions

    @Flag(name: .customLong("user-verified"), help: "The client attested the user (biometrics); required at high stakes by default.")
    var userVerified = false

    func execute() throws {
        try tap.action.run(.tap(.approve, actionId: tap.action.action, device: tap.action.device,
                                userVerified: userVerified, seenContent: try tap.seenContent()), global: global)
    }
}
