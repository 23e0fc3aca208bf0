import ActionLedger
import ArgumentParser

struct AuditEvents: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "Every audit entry in a time window (default: the 24 hours up to --now), oldest first.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var time: NowOption
    @OptionGroup var window: WindowOptions
    @OptionGroup var format: CSVOption

    @Option(help: "Entries per page.")
    var limit = 100

    @Option(name: .customLong("page-token"), help: "Continue after an earlier page (its next_page_token).")
    var pageToken: String?

    func execute() throws {
        let ledger = try global.open(write: false)
        let w = try window.window(now: try time.resolve(global), defaultSince: Timestamp.day)
        let listing = try ledger.query { try $0.audit(.all, in: w, limit: limit, pageToken: pageToken) }
        AuditPrinter.print(listing, global: global, csv: format.csv)
    }
}
