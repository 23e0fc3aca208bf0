import ActionLedger
import ArgumentParser

struct AuditEvents: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "Every audit entry in a time window (default: the 24 hours up to --now), oldest first.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var listing: AuditListingOptions

    func execute() throws {
        try listing.run(.all, defaultSince: Timestamp.day, global: global)
    }
}
