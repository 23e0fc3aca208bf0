import ActionLedger
import ArgumentParser

struct AuditActor: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "actor", abstract: "Audit entries of one actor in a window, oldest first.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var listing: AuditListingOptions

    @Argument(help: "A person (or operator, system:policy, specialist:NAME).")
    var actor: String

    func execute() throws {
        // Not an identifier: `specialist:NAME` carries a specialist's name (up to 256 bytes), which may hold spaces.
        try CommandRunner.requireText(actor, option: "the actor", field: "actor",
                                      max: actor.hasPrefix(Event.specialistPrefix) ? Event.longestActor : 128)
        try listing.run(.actor(actor), global: global)
    }
}
