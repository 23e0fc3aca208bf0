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

    /// In a posting database: positions at the first duplicate ≥ `value` of exactly `key`
    /// (`MDB_GET_BOTH_RANGE`); nil when the key is absent or every duplicate is smaller.
    public func seek(key: UnsafeRawBufferPointer, atLeast value: UnsafeRawBufferPointer) throws -> Entry? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_cursor_get(cursor, &k, &v, MDB_GET_BOTH_RANGE)
        if rc == LMDBError.notFound { return nil }
        try check(rc, "mdb_cursor_get(\(name))")
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// In a posting database: stores `count` fixed-size duplicates under `key` in one call
    /// (`MDB_MULTIPLE`), with `flags` (e.g. ``PutFlags/appendDuplicate``).
    /// - throws: ``LMDBError`` (``LMDBError/keyExists`` when a duplicate does not sort last).
    public func putDuplicates(key: UnsafeRawBufferPointer, items: UnsafeRawBufferPointer, size: Int, flags: PutFlags) throws {
        precondition(size > 0 && items.count % size == 0, "items must be whole duplicates")
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = (MDB_val(mv_size: size, mv_data: UnsafeMutableRawPointer(mutating: items.baseAddress)),
                    MDB_val(mv_size: items.count / size, mv_data: nil))
        let rc = withUnsafeMutablePointer(to: &data) { p in
            p.withMemoryRebound(to: MDB_val.self, capacity: 2) { mdb_cursor_put(cursor, &k, $0, flags.rawValue | UInt32(MDB_MULTIPLE)) }
        }
        try check(rc, "mdb_cursor_put(\(name), MDB_MULTIPLE)")
    }

    /// The next duplicate of the current key (`MDB_NEXT_DUP`); nil past its last.
    public func nextDuplicate() throws -> Entry? { try op(MDB_NEXT_DUP) }

    /// Positions at the first key ≥ `key`; with `reverse`, at the last key ≤ `key`.
    public func seek(atLeast key: [UInt8], reverse: Bool = false) throws -> Entry? {
        let found = try key.withUnsafeBytes { try op(MDB_SET_RANGE, key: $0) }
        guard reverse else { return found }
        guard let found else { return try last() }
        if found.key.elementsEqual(key) { return found }
        return try previous()
    }
}
