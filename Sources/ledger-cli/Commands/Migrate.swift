import ActionLedger
import ArgumentParser
import Foundation

struct Migrate: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a store written by an older build, in place; its events are never touched.",
        discussion: """
            An older store opens for reading, but its writes are refused with `migration_required` (exit 40) \
            until it is migrated. migrate verifies the whole hash chain first (a log that does not verify is \
            refused with integrity_failure and left as it was), converts the log's layout and meta records, and \
            rebuilds every projection of another version from the log. Resumable; holds the rebuild lock.
            """)

    @OptionGroup var global: GlobalOptions

    func execute() throws {
        try global.requireStore()
        let ledger = try global.open(write: true)
        let report = try ledger.migrate()
        if global.json { return Output.json(report.json) }
        guard let reason = report.reason else { return Human.line("\(global.path) is current: nothing to migrate") }
        let rebuilt = report.rebuilt.isEmpty ? "" : "; rebuilt " + report.rebuilt.joined(separator: ", ")
        Human.line("migrated \(global.path) (\(reason)): \(report.events) events kept\(rebuilt), in "
            + String(format: "%.2f s", report.seconds))
    }
}
