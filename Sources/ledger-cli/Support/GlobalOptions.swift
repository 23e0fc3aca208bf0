import ActionLedger
import ArgumentParser
import Foundation

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The ledger file (default: $LEDGER_DB, else ./ledger.lmdb).")
    var db: String?

    @Flag(name: .long, help: "Print JSON on stdout (errors as {\"error\": {\"code\", \"message\"}}).")
    var json = false

    @Flag(name: .customLong("read-only"), help: "Open the store read-only (MDB_RDONLY); write commands are refused.")
    var readOnly = false

    /// The store path: `--db`, else `$LEDGER_DB`, else `./ledger.lmdb`.
    var path: String {
        db ?? ProcessInfo.processInfo.environment["LEDGER_DB"] ?? "ledger.lmdb"
    }

    /// Opens the ledger; `write` commands refuse `--read-only` before touching the file.
    /// Commands that only read open it `MDB_RDONLY` themselves, with or without
    /// `--read-only`: a query never needs write access (a file the user cannot write, a
    /// read-only mount), and an audit's queries cannot change the store they audit.
    /// Only `create` (`ledger init`) opens a path where no store is: any other command,
    /// writing or not, would otherwise start a second log at a mistyped `--db`, without
    /// its `store.created`.
    func open(write: Bool, create: Bool = false) throws -> Ledger {
        if write && readOnly {
            throw LedgerError(.readOnly, "this command writes; it cannot run with --read-only")
        }
        if !create { try requireStore() }
        let ledger = try Ledger(path: path, options: Ledger.Options(readOnly: readOnly || !write, requireLog: !create))
        // Every command on a store not made for testing refuses LEDGER_NOW, whether or not it
        // reads the clock: a reader that ignored it would let a script believe its time counted.
        if !create { try requireClock(ledger) }
        return ledger
    }

    /// Refuses `LEDGER_NOW` unless the store was created for testing (``now(_:)`` says why).
    func requireClock(_ ledger: Ledger) throws {
        if Clock.isSet { _ = try now(ledger) }
    }

    /// Refuses a path that holds no store: a missing path, a directory, an empty file
    /// (LMDB would make a store of it, without `store.created`), anything but a file of
    /// at least a meta page's size. Checked before LMDB opens the path, so no `-lock`
    /// file is left beside it.
    func requireStore() throws {
        // stat(2) follows a symbolic link, as the open will (FileManager's attributes do not).
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size >= 4096 else {
            throw LedgerError(.invalidInput, "no ledger at \(path) (set --db or LEDGER_DB; `ledger init` creates one)")
        }
        // An LMDB file's first page is a meta page carrying LMDB's magic: anything else (an
        // export, a key file, a log of the shell's) is no store, not a damaged one, and LMDB
        // must not leave a `-lock` file beside it.
        guard Self.hasLMDBMagic(path) else {
            throw LedgerError(.invalidInput, "no ledger at \(path): it is not an LMDB file (set --db or LEDGER_DB; `ledger init` creates one)")
        }
    }

    /// Whether either meta page (page 0, or page 1 at any page size LMDB uses: the OS page,
    /// 4 KiB to 64 KiB) carries LMDB's magic, 0xBEEFC0DE after the 16-byte page header in the
    /// writer's byte order: a store with one damaged meta page is still a store, for `verify`
    /// to call damaged.
    static func hasLMDBMagic(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return true }  // LMDB's open says why
        defer { close(fd) }
        // Page 0 first (every intact store): the other offsets are read only when it fails.
        return [0, 4096, 8192, 16384, 32768, 65536].contains { page in
            var magic: UInt32 = 0
            guard pread(fd, &magic, 4, off_t(page + 16)) == 4 else { return false }
            return magic == 0xBEEF_C0DE || magic.byteSwapped == 0xBEEF_C0DE
        }
    }

    /// The engine clock for `ledger`: the system time, or `LEDGER_NOW` when the store was
    /// created for testing (`ledger init --test-clock`, `ledger demo`).
    /// - throws: `test_clock_only` when `LEDGER_NOW` is set for any other store.
    func now(_ ledger: Ledger) throws -> Timestamp {
        try Clock.now(testClock: try ledger.creation()?.testClock ?? false, path: path)
    }
}

enum Clock {
    /// `LEDGER_NOW` for a store on a test clock, else the system clock. A production
    /// store never takes a clock from the environment: its times are the engine's.
    static func now(testClock: Bool, path: String) throws -> Timestamp {
        // Set at all (empty included) is refused by a production store before it is read.
        guard isSet else { return system() }
        guard testClock, let fixed = try fixedClock() else {
            throw LedgerError(.testClockOnly, "LEDGER_NOW is honoured only by a store created for testing "
                + "(`ledger init --test-clock`); \(path) is not one: unset LEDGER_NOW")
        }
        return fixed
    }

    /// Whether `LEDGER_NOW` is set, to anything (empty included).
    static var isSet: Bool { ProcessInfo.processInfo.environment["LEDGER_NOW"] != nil }

    /// `LEDGER_NOW`, parsed, when set.
    static func fixedClock() throws -> Timestamp? {
        guard let fixed = ProcessInfo.processInfo.environment["LEDGER_NOW"] else { return nil }
        guard let t = Timestamp(iso8601: fixed) else {
            throw LedgerError(.invalidInput, "LEDGER_NOW is not an ISO-8601 time: \(fixed)")
        }
        return t
    }

    static func system() -> Timestamp {
        Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// Parses a time option given as ISO-8601.
    static func parse(_ text: String, option: String) throws -> Timestamp {
        guard let t = Timestamp(iso8601: text) else {
            throw LedgerError(.invalidInput, "\(option): expected an ISO-8601 time such as 2026-11-22T09:00:00Z, got \(text)")
        }
        return t
    }
}
