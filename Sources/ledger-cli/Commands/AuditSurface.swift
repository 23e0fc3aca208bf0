import ActionLedger
import ArgumentParser

struct AuditSurface: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "surface", abstract: "Audit entries of one surface in a window, oldest first.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var time: NowOption
    @OptionGroup var window: WindowOptions
    @OptionGroup var format: CSVOption

    @Argument(help: "A surface, e.g. onlyfans.")
    var surface: String

    @Option(help: "Entries per page.")
    var limit = 100

    @Option(name: .customLong("page-token"), help: "Continue after an earlier page (its next_page_token).")
    var pageToken: String?

    func execute() throws {
        let ledger = try global.open(write: false)
        let w = try window.window(now: try time.resolve(global), defaultSince: nil)
        let listing = try ledger.query { try $0.audit(.surface(surface), in: w, limit: limit, pageToken: pageToken) }
        AuditPrinter.print(listing, global: global, csv: format.csv)
    }
}
