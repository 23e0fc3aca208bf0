import ActionLedger
import ArgumentParser
import Foundation

struct Demo: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Record a realistic day for Quinn in a new demo store (test clock) and tell what happened.",
        discussion: """
            The store is made on a test clock and marked as a demo store by its first event \
            (store.created). --fresh replaces an earlier demo store only: a path holding any other \
            file or store is refused before anything is touched. The new store is built beside the \
            path and moved into place only when the whole day is recorded.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Replace an earlier demo store at --db (never any other file or store).")
    var fresh = false

    func execute() throws {
        // Everything is checked before any file is touched.
        if global.readOnly { throw LedgerError(.readOnly, "demo writes a store; it cannot run with --read-only") }
        let end = try Clock.fixedClock() ?? Clock.system()
        let start = end.adding(milliseconds: -10 * Timestamp.hour)
        _ = try TimeRules.check(start, head: nil)
        _ = try TimeRules.check(end, head: nil)
        let path = global.path
        // A path no store can be moved to (empty, a missing or unwritable folder) is refused
        // now, not after the whole day was recorded beside it.
        try NewFile.requireNewPath(path)
        let found = try DemoTarget.inspect(path)
        if case .demoStore(let events) = found, !fresh {
            throw LedgerError(.notEmpty, "\(path) already holds a demo store (\(events) events); use --fresh to "
                + "replace it, or another --db", details: ["events": .number(Double(events))])
        }
        // Asked again at the move, under the store's lock; asked first so that a day recorded
        // in vain is not told as done before the refusal.
        if case .demoStore = found { try Ledger.requireNotOpenElsewhere(path) }
        try Environment.requireUsableLockFile(for: path)
        let building = try ScratchStore.make(beside: path, kind: "building")
        defer {
            AbandonedScratch.removeOwn(building)
        }
        let (summary, head) = try record(into: building, start: start)
        // Moved into place only now: a failed run above left the old store as it was; and
        // only over what was inspected, which may have changed while the day was recorded.
        // The path's lock file stays: a process may already have opened the new store with it,
        // and a lock file deleted under a process leaves its writers refused (cli.md).
        try Environment.makeLockFile(for: path)
        try DemoTarget.move(building, to: path, found: found)
        if global.json {
            Output.json(["db": .string(path), "events": .number(Double(head.seq)), "head_hash": .string(head.hash.hex),
                         "summary": .object(summary)])
        }
    }

    /// Records the day into a new store at `path`; the store is closed on return.
    private func record(into path: String, start: Timestamp) throws -> (JSONObject, LogHead) {
        let ledger = try Ledger(path: path)
        try ledger.create(StoreCreation(testClock: true, demo: true), now: start)
        var story = DemoStory(ledger: ledger, start: start, quiet: global.json)
        try story.run()
        return (story.summary, try ledger.read { try $0.head() })
    }
}
