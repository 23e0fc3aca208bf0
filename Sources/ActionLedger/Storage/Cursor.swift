import CLMDB

/// A cursor over one database, lending keys and values zero-copy. Lives no longer than
/// its transaction; ``Transaction/scan(_:from:reverse:_:)`` is the usual way in.
public final class Cursor {
    private let cursor: OpaquePointer
    private let name: String

    /// Opens a cursor on `db` inside `txn`.
    public init(_ txn: Transaction, _ db: Database) throws {
        var c: OpaquePointer?
        try check(mdb_cursor_open(txn.txn, db.dbi, &c), "mdb_cursor_open(\(db.name))")
        cursor = c!
        name = db.name
    }

    /// Closes the cursor; call before the transaction ends.
    public func close() { mdb_cursor_close(cursor) }

    public typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    private func op(_ operation: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws -> Entry? {
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val()
        let rc = mdb_cursor_get(cursor, &k, &v, operation)
        if rc == LMDBError.notFound { return nil }
        try check(rc, "mdb_cursor_get(\(name))")
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    public func first() throws -> Entry? { try op(MDB_FIRST) }
    public func last() throws -> Entry? { try op(MDB_LAST) }
    public func next() throws -> Entry? { try op(MDB_NEXT) }
    public func previous() throws -> Entry? { try op(MDB_PREV) }

    /// Positions at the first key ≥ `key`; with `reverse`, at the last key ≤ `key`.
    public func seek(atLeast key: [UInt8], reverse: Bool = false) throws -> Entry? {
        let found = try key.withUnsafeBytes { try op(MDB_SET_RANGE, key: $0) }
        guard reverse else { return found }
        guard let found else { return try last() }
        if found.key.elementsEqual(key) { return found }
        return try previous()
    }
}
