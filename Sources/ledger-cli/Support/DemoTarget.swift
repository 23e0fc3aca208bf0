import ActionLedger
import Foundation

/// What `ledger demo` finds at its `--db` path, judged before any file is touched: only a
/// missing path, an empty file or store, or a store `ledger demo` made (its first event
/// `store.created` says `demo: true`) may be written or replaced. A demo store can be
/// rebuilt at will; anything else cannot, so the demo never deletes it, `--fresh` or not.
enum DemoTarget {
    enum Found {
        /// Nothing there, an empty file, or a store with no events but its `store.created`.
        case nothing
        /// A demo store holding `events` events.
        case demoStore(events: UInt64)
    }

    static func inspect(_ path: String) throws -> Found {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return .nothing }
            throw LedgerError(.invalidInput, "cannot inspect \(path): \(String(cString: strerror(errno)))")
        }
        // Something the demo did not make is there (cli.md: `not_empty`), kept as it is.
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw LedgerError(.notEmpty, "\(path) is not a regular file; the demo writes only its own store file: choose another --db")
        }
        if info.st_size == 0 { return .nothing }
        guard hasLMDBMagic(path) else {
            throw LedgerError(.notEmpty, "\(path) is not a ledger store (no LMDB header); the demo never replaces "
                + "a file it did not make: choose another --db")
        }
        let ledger: Ledger
        do {
            ledger = try Ledger(path: path, options: Ledger.Options(readOnly: true))
        } catch {
            throw LedgerError(.notEmpty, "\(path) is an LMDB file but not a ledger store; the demo never replaces it: "
                + "choose another --db")
        }
        let head = try ledger.read { try $0.head() }
        // A store holding only its own store.created has nothing to lose.
        if try head.seq == 0 || (head.seq == 1 && ledger.creation() != nil) { return .nothing }
        guard let creation = try ledger.creation(), creation.demo else {
            throw LedgerError(.notEmpty, "\(path) holds \(head.seq) events and is not a demo store; the demo never "
                + "deletes a store it cannot rebuild: choose another --db", details: ["events": .number(Double(head.seq))])
        }
        return .demoStore(events: head.seq)
    }

    /// Moves the demo store built at `building` to `path`, which held `found` when the demo
    /// began: a path that was free is linked (never replacing a file made meanwhile), an
    /// empty file renamed over, and a store replaced under its writer lock only if its head
    /// is still what was inspected (``Ledger/replaceStore(at:with:ifHead:)``).
    /// - throws: `not_empty` when the path was written meanwhile; it is left as it is.
    static func move(_ building: String, to path: String, found: Found) throws {
        func changed(_ what: String) -> LedgerError {
            LedgerError(.notEmpty, "\(path) \(what) while the demo ran; it is left as it is: run the demo again")
        }
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw LedgerError(.storage, "cannot inspect \(path): \(String(cString: strerror(errno)))") }
            guard link(building, path) == 0 else {
                if errno == EEXIST { throw changed("was created") }
                throw LedgerError(.storage, "cannot link the demo store as \(path): \(String(cString: strerror(errno)))")
            }
            Environment.syncDirectory(of: path)
            return
        }
        if info.st_mode & S_IFMT == S_IFREG && info.st_size == 0 {
            guard rename(building, path) == 0 else {
                throw LedgerError(.storage, "cannot move the demo store to \(path): \(String(cString: strerror(errno)))")
            }
            Environment.syncDirectory(of: path)
            return
        }
        let expected: (UInt64) -> Bool
        switch found {
        case .nothing: expected = { $0 <= 1 }
        case .demoStore(let events): expected = { $0 == events }
        }
        try Ledger.replaceStore(at: path, with: building) { head in
            guard expected(head) else { throw changed("was written (it holds \(head) events now)") }
        }
    }

    /// The LMDB meta page's magic number (0xBEEFC0DE, little-endian, after the 16-byte page
    /// header): checked before LMDB opens the file, which would create a lock file beside it.
    private static func hasLMDBMagic(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 20), head.count == 20 else { return false }
        return Array(head[16..<20]) == [0xDE, 0xC0, 0xEF, 0xBE]
    }
}
