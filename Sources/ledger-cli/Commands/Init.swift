import ActionLedger
import ArgumentParser
import Foundation

struct Init: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a new, empty store; its first event (store.created) records how it was made.",
        discussion: """
            --test-clock makes a store for tests: it honours LEDGER_NOW, and store.created says so \
            for every auditor to see. Any other store refuses LEDGER_NOW (test_clock_only).
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(name: .customLong("test-clock"), help: "Honour LEDGER_NOW in this store (tests only; recorded in the log).")
    var testClock = false

    func execute() throws {
        if global.readOnly { throw LedgerError(.readOnly, "init writes a store; it cannot run with --read-only") }
        if !testClock, Clock.isSet {
            throw LedgerError(.testClockOnly, "LEDGER_NOW is set but --test-clock is not: a production store "
                + "takes its time from the system clock only")
        }
        // lstat, not a followed path: a symlink there, dangling or not, and a leftover or planted
        // `-lock` are refused too, so init never creates or truncates a file somewhere else.
        for path in [global.path, global.path + "-lock"] where NewFile.exists(path) {
            throw LedgerError(.notEmpty, "\(path) already exists; init makes new stores only")
        }
        // Its `-lock` too: a path whose lock file could not be named is no place for a store.
        try NewFile.requireNewPath(global.path)
        try NewFile.requireNewPath(global.path + "-lock")
        let now = testClock ? try Clock.fixedClock() ?? Clock.system() : Clock.system()
        // Made beside the path and linked into place once store.created is durable, as import
        // and demo do: an init killed half-way leaves only scratch (removed by the next init),
        // never a file at the path that holds no log, which every command, init included, refuses.
        let path = global.path
        AbandonedScratch.remove(beside: path, kind: "creating")
        let building = path + ".creating-\(getpid())"
        defer { AbandonedScratch.removeOwn(building) }
        let head = try Self.create(at: building, StoreCreation(testClock: testClock, demo: false), now: now)
        // link(2), not rename(2): whatever was created at the path meanwhile is kept.
        guard link(building, path) == 0 else {
            if errno == EEXIST { throw LedgerError(.notEmpty, "\(path) was created while init ran; it is left as it is") }
            throw LedgerError(.storage, "cannot move the new store to \(path): \(String(cString: strerror(errno)))")
        }
        Environment.syncDirectory(of: path)
        if global.json {
            Output.json(["db": .string(global.path), "test_clock": .bool(testClock), "head_hash": .string(head.hash.hex)])
        } else {
            Human.line("created \(global.path)" + (testClock ? " (test clock: LEDGER_NOW honoured)" : ""))
        }
    }

    /// Creates the store at `path` and closes it (its handle gone before the file is linked
    /// into place and its scratch names removed); returns its head.
    private static func create(at path: String, _ creation: StoreCreation, now: Timestamp) throws -> LogHead {
        let ledger = try Ledger(path: path, options: Ledger.Options(readOnly: false, requireLog: false))
        try ledger.create(creation, now: now)
        return try ledger.read { try $0.head() }
    }
}
