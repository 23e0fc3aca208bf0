import ActionLedger
import ArgumentParser

struct AuditDevice: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Audit entries of one device in a window, oldest first.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var listing: AuditListingOptions

    @Argument(help: "A device id.")
    var device: String

    func execute() throws {
        try CommandRunner.requireName(device, option: "the device id", field: "device")
        try listing.run(.device(device), global: global)
    }
}
