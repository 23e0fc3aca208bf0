import ActionLedger
import ArgumentParser

struct AuditSpecialist: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "specialist", abstract: "Audit entries of one specialist in a window, oldest first.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var listing: AuditListingOptions

    @Argument(help: "A specialist's name.")
    var specialist: String

    func execute() throws {
        try CommandRunner.requireText(specialist, option: "the specialist", field: "specialist", max: 256)
        try listing.run(.specialist(specialist), global: global)
    }
}
