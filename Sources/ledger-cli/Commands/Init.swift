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
        // lstat, not a followed path: a symlink there, dangling or not, and a planted `-lock`
        // are refused too, so init never creates or truncates a file somewhere else. A lock
        // file of the user's own left with no store (an init killed just before its move) is
        // the new store's to take.
        for path in [global.path, global.path + "-lock"] where NewFile.exists(path) {
            if path != global.path, Environment.takeLeftoverLockFile(for: global.path) { continue }
            throw LedgerError(.notEmpty, "\(path) already exists" + (path == global.path ? "" : " (in use, a link, or not yours)")
                + "; init makes new stores only")
        }
        // Its `-lock` too: a path whose lock file could not be named is no place for a store.
        try NewFile.requireNewPath(global.path)
        try NewFile.requireNewPath(global.path + "-lock")
        let now = testClock ? try Clock.fixedClock() ?? Clock.system() : Clock.system()
        let creation = StoreCreation(testClock: testClock, demo: false)
        let head = try Self.create(at: global.path, creation, now: now) ?? {
            // Where nothing moves without replacing, made at the path itself (a kill part-way
            // then leaves a store without its log there, to be removed by hand).
            let ledger = try global.open(write: true, create: true)
            try ledger.create(creation, now: now)
            return try ledger.read { try $0.head() }
        }()
        if global.json {
            Output.json(["db": .string(global.path), "test_clock": .bool(testClock), "head_hash": .string(head.hash.hex)])
        } else {
            Human.line("created \(global.path)" + (testClock ? " (test clock: LEDGER_NOW honoured)" : ""))
        }
    }

    /// Makes the store beside `path` (``ScratchStore``) and moves it there once store.created
    /// is durable; returns its head, or nil when the file system cannot move it so.
    /// - throws: `not_empty` when something was created at `path` meanwhile (it is kept).
    private static func create(at path: String, _ creation: StoreCreation, now: Timestamp) throws -> LogHead? {
        let scratch = try ScratchStore.make(beside: path, kind: "creating")
        defer { AbandonedScratch.removeOwn(scratch) }
        // Closed before the move: an open handle holds the file for its scratch lock file,
        // and would have every open of the store at its path refused meanwhile.
        let head = try {
            let ledger = try Ledger(path: scratch, options: Ledger.Options(readOnly: false, requireLog: false))
            try ledger.create(creation, now: now)
            return try ledger.read { try $0.head() }
        }()
        try Environment.makeLockFile(for: path)
        switch try ScratchStore.move(scratch, to: path) {
        case .moved: Environment.syncDirectory(of: path)
        case .taken: throw LedgerError(.notEmpty, "\(path) was created while init ran; it is left as it is")
        case .unsupported: return nil
        }
        return head
    }
}
