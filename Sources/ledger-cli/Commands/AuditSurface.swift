import ActionLedger
import ArgumentParser

struct AuditSurface: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "surface", abstract: "Audit entries of one surface in a window, oldest first.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var listing: AuditListingOptions

    @Argument(help: "A surface, e.g. onlyfans.")
    var surface: String

    func execute() throws {
        try CommandRunner.requireName(surface, option: "the surface", field: "surface")
        try listing.run(.surface(surface), global: global)
    }
}
