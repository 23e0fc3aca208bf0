import ActionLedger
import ArgumentParser
import Foundation

struct Demo: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Record a realistic day for Quinn in a fresh ledger and tell what happened.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Delete an existing ledger file at --db first.")
    var fresh = false

    func execute() throws {
        if fresh {
            try? FileManager.default.removeItem(atPath: global.path)
            try? FileManager.default.removeItem(atPath: global.path + "-lock")
        }
        let ledger = try global.open(write: true)
        guard try ledger.read({ try $0.head().seq }) == 0 else {
            throw LedgerError(.notEmpty, "\(global.path) already holds events; use --fresh or another --db")
        }
        let end = try global.now()
        let start = end.adding(milliseconds: -10 * Timestamp.hour)
        var story = DemoStory(ledger: ledger, start: start, quiet: global.json)
        try story.run()
        if global.json {
            let head = try ledger.read { try $0.head() }
            Output.json(["db": .string(global.path), "events": .number(Double(head.seq)), "head_hash": .string(head.hash.hex),
                         "summary": .object(story.summary)])
        }
    }
}
