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
    func open(write: Bool) throws -> Ledger {
        if write && readOnly {
            throw LedgerError(.readOnly, "this command writes; it cannot run with --read-only")
        }
        if !write && !FileManager.default.fileExists(atPath: path) {
            throw LedgerError(.invalidInput, "no ledger at \(path) (set --db or LEDGER_DB)")
        }
        return try Ledger(path: path, options: Ledger.Options(readOnly: readOnly || !write))
    }

    /// The engine clock: `LEDGER_NOW` (ISO-8601; a test/demo clock) or the system time.
    func now() throws -> Timestamp { try Clock.now() }
}

enum Clock {
    /// `LEDGER_NOW` when set (documented as a test and demo clock), else the system clock.
    static func now() throws -> Timestamp {
        if let fixed = ProcessInfo.processInfo.environment["LEDGER_NOW"] {
            guard let t = Timestamp(iso8601: fixed) else {
                throw LedgerError(.invalidInput, "LEDGER_NOW is not an ISO-8601 time: \(fixed)")
            }
            return t
        }
        return Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// Parses a time option given as ISO-8601.
    static func parse(_ text: String, option: String) throws -> Timestamp {
        guard let t = Timestamp(iso8601: text) else {
            throw LedgerError(.invalidInput, "\(option): expected an ISO-8601 time such as 2026-11-22T09:00:00Z, got \(text)")
        }
        return t
    }
}
