import CLMDB

/// A named LMDB database (a `MDB_dbi`). Handles stay valid for the environment's life.
public struct Database: Sendable, Hashable {
    let dbi: MDB_dbi
    /// The database's name in the environment.
    public let name: String
}

/// An open LMDB transaction, lent to the closure given to ``Environment/read(_:)`` or
/// ``Environment/write(_:)``. Valid only inside that closure; never share it across
/// threads or hold it across an `await`.
public final class Transaction {
    let txn: OpaquePointer
    /// The environment this transaction belongs to.
    public unowned let environment: Environment
    /// Whether this is a read-only snapshot.
    public let isReadOnly: Bool
    /// The enclosing transaction of a nested one.
    let parent: Transaction?
    /// Handles this transaction opened: valid for others only once it commits (LMDB
    /// closes handles opened in an aborted transaction), so they are published then.
    var openedHandles: [Database] = []

    init(txn: OpaquePointer, environment: Environment, isReadOnly: Bool, parent: Transaction? = nil) {
        self.txn = txn
        self.environment = environment
        self.isReadOnly = isReadOnly
        self.parent = parent
    }

    /// Called after a successful commit: hands this transaction's new handles to the
    /// parent (a nested commit), or to the environment's cache (a top-level commit).
    func didCommit() {
        guard !openedHandles.isEmpty else { return }
        if let parent { parent.openedHandles += openedHandles } else { environment.handles.publish(openedHandles) }
    }

    /// Opens a named database; in a write transaction, creates it when missing.
    /// Returns nil when it does not exist and cannot be created here.
    /// With `duplicates`, the database keeps sorted, fixed-size duplicates under each key
    /// (`MDB_DUPSORT | MDB_DUPFIXED`): the posting lists of the layout before segments,
    /// opened only to be dropped.
    public func openDatabase(_ name: String, create: Bool = true, duplicates: Bool = false) throws -> Database? {
        // Cached handles skip mdb_dbi_open (and its C-string conversion) on every transaction.
        if let cached = environment.handles[name] { return cached }
        var dbi: MDB_dbi = 0
        var flags = (create && !isReadOnly) ? UInt32(MDB_CREATE) : 0
        if duplicates { flags |= UInt32(MDB_DUPSORT | MDB_DUPFIXED) }
        // LMDB's table of handles is the environment's, and a read transaction writes into it
        // directly: two mdb_dbi_open at once (a server's first requests and its writer's fold)
        // cross-wired handles, one projection's entries landing in another's database. One at a
        // time, per environment; the environment's open already opened every database there was.
        return try environment.handles.openingLock.withLock {
            if let published = environment.handles[name] { return published }  // by a transaction just committed
            let rc = mdb_dbi_open(txn, name, flags, &dbi)
            if rc == LMDBError.notFound { return nil }
            try check(rc, "mdb_dbi_open(\(name))")
            let db = Database(dbi: dbi, name: name)
            openedHandles.append(db)
            return db
        }
    }

    /// Lends the value stored under `key` to `body`, zero-copy; nil when absent.
    ///
    /// - warning: The buffer points into the map and is valid only inside `body`.
    @inline(__always)
    public func withValue<R>(
        _ db: Database, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(txn, db.dbi, &k, &v)
        if rc == LMDBError.notFound { return nil }
        try check(rc, "mdb_get(\(db.name))")
        return try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// Lends the value stored under `key` (any byte collection) to `body`; nil when absent.
    public func withValue<R>(
        _ db: Database, key: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try withBytes(key) { k in try withValue(db, key: k, body) }
    }

    /// Copies out the value stored under `key`; nil when absent.
    public func get(_ db: Database, key: some Collection<UInt8>) throws -> [UInt8]? {
        try withBytes(key) { k in try withValue(db, key: k) { Array($0) } }
    }

    /// Stores `value` under `key`, as `flags` allow; a refused put throws ``LMDBError``
    /// with its code (``LMDBError/keyExists``).
    public func put(_ db: Database, key: some Collection<UInt8>, value: some Collection<UInt8>, flags: PutFlags = []) throws {
        try withBytes(key) { k in
            try withBytes(value) { v in try put(db, key: k, value: v, flags: flags) }
        }
    }

    /// Raw-buffer form of ``put(_:key:value:flags:)``.
    @inline(__always)
    public func put(_ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: PutFlags = []) throws {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try check(mdb_put(txn, db.dbi, &k, &v, flags.rawValue), "mdb_put(\(db.name))")
    }

    /// Removes `key`; returns whether it was present. Used by projections only: the
    /// event log never deletes.
    @discardableResult
    public func delete(_ db: Database, key: some Collection<UInt8>) throws -> Bool {
        try withBytes(key) { k in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            let rc = mdb_del(txn, db.dbi, &kv, nil)
            if rc == LMDBError.notFound { return false }
            try check(rc, "mdb_del(\(db.name))")
            return true
        }
    }

    /// Empties a database (`mdb_drop`), or deletes it from the environment with `delete`.
    public func drop(_ db: Database, delete: Bool = false) throws {
        if delete {
            // A deleted database's handle must not be published when this transaction commits.
            environment.handles.evict(db.name)
            openedHandles.removeAll { $0.name == db.name }
        }
        try check(mdb_drop(txn, db.dbi, delete ? 1 : 0), "mdb_drop(\(db.name))")
    }

    /// Number of entries in `db`.
    public func count(_ db: Database) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(txn, db.dbi, &stat), "mdb_stat(\(db.name))")
        return stat.ms_entries
    }

    /// Runs `body` in a child transaction: its writes are kept when it returns and
    /// discarded when it throws, leaving this transaction intact. Group commit uses it so
    /// that a refused command does not fail the others in its batch.
    public func nested<T>(_ body: (Transaction) throws -> T) throws -> T {
        try environment.run(try environment.begin(parent: self, flags: 0), body)
    }

    /// Iterates `db` in key order from `start` (inclusive; from the first key when nil),
    /// lending each key and value; `body` returns false to stop.
    public func scan(
        _ db: Database, from start: [UInt8]? = nil, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let cursor = try Cursor(self, db)
        defer { cursor.close() }
        var entry = try start.map { try cursor.seek(atLeast: $0, reverse: reverse) }
            ?? (reverse ? cursor.last() : cursor.first())
        while let (k, v) = entry {
            guard try body(k, v) else { return }
            entry = try reverse ? cursor.previous() : cursor.next()
        }
    }
}

@inline(__always)
func withBytes<C: Collection<UInt8>, R>(_ bytes: C, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    if let r = try bytes.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
        return r
    }
    return try Array(bytes).withUnsafeBytes(body)
}

/// Lends `tag ‖ key` from a stack buffer: the stored key of an entry in a database that
/// holds several logical ones as key ranges (the log's `log_index`, each projection's
/// database). Every such read and write goes through here, so it allocates nothing.
@inline(__always)
func withTaggedKey<R>(_ tag: UInt8, _ key: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withBytes(key) { k in
        try withUnsafeTemporaryAllocation(byteCount: k.count + 1, alignment: 1) { buffer in
            buffer[0] = tag
            if k.count > 0 { UnsafeMutableRawBufferPointer(rebasing: buffer[1...]).copyMemory(from: k) }
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }
}
