import CLMDB
#if canImport(Glibc)
import Glibc
#endif

/// An error reported by LMDB, carrying its return code and `mdb_strerror` text.
///
/// Modelled on GRDB's `DatabaseError`: a struct holding a code you can match on,
/// rather than a large enum, so new LMDB codes never break a `switch`.
public struct LMDBError: Error, Sendable, CustomStringConvertible, Equatable {
    /// LMDB's (or errno's) return code.
    public let code: Int32
    /// The LMDB call that failed, e.g. `mdb_put`.
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// `mdb_strerror(code)`: LMDB's own text, which also covers errno values.
    public var message: String { String(cString: mdb_strerror(code)) }

    public var description: String {
        // liblmdb answers a write that stored only part of its pages with EIO ("short write,
        // filesystem full?" in mdb.c): say so, or a full disk reads as a failing one.
        let hint = code == EIO && operation.hasPrefix("mdb_txn_commit")
            ? "; liblmdb reports a short write this way: the disk may be full or the file-size limit reached" : ""
        return "\(operation): \(message) (\(code))\(hint)"
    }

    public static let notFound: Int32 = MDB_NOTFOUND
    public static let keyExists: Int32 = MDB_KEYEXIST
    public static let mapFull: Int32 = MDB_MAP_FULL
    public static let mapResized: Int32 = MDB_MAP_RESIZED
    public static let readersFull: Int32 = MDB_READERS_FULL

    /// LMDB found the file's pages are not what it wrote (a page it cannot find, a page of
    /// the wrong kind, a file that is no LMDB environment): damage, not a storage fault.
    public var isDamage: Bool { [MDB_PAGE_NOTFOUND, MDB_CORRUPTED, MDB_INVALID].contains(code) }

    /// What this failure is to a user of `store`, the CLI's and the server's alike: damage
    /// (`integrity_failure`, `damaged_page`: a broken store, as a broken chain is, not a disk
    /// fault worth retrying), else `storage_error`.
    public func ledgerError(store: String) -> LedgerError {
        isDamage
            ? LedgerError(.integrityFailure, "\(store) is damaged: \(description); `ledger verify --deep` names the damage",
                          details: ["problem": "damaged_page"])
            : LedgerError(.storage, description)
    }
}

/// Throws an `LMDBError` unless `rc` is `MDB_SUCCESS`.
@inline(__always)
func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
    if rc != MDB_SUCCESS { throw LMDBError(code: rc, operation: operation()) }
}
