import CLMDB

/// A named, versioned, deterministic fold over the log into its own LMDB databases.
///
/// `apply` must depend only on the event and the projection's own state: no clock reads,
/// no I/O outside the ``ProjectionStore``. An event it cannot apply must throw; the
/// engine then stops and names the seq — nothing is skipped silently.
public protocol Projection: Sendable {
    /// Unique name, e.g. `today`.
    var name: String { get }
    /// Bump when the fold changes; a stored projection of another version is rebuilt.
    var version: UInt32 { get }
    /// Its logical databases; ``ProjectionStore`` methods take an index into this list.
    var databases: [String] { get }
    /// Folds one event into the store.
    func apply(_ event: Event, to store: ProjectionStore) throws
}

/// A projection's view of one write (or read) transaction: its own databases only, with
/// its checkpoint and a state digest kept in step with every write.
///
/// The digest is a multiset hash: the lane-wise sum of SHA-256(db index ‖ key length ‖
/// key ‖ value) over every entry. A put subtracts the old entry's hash and adds the new
/// one, so the digest always equals a fresh hash of the whole state, computed
/// incrementally — two projections with equal digests hold equal entries.
public final class ProjectionStore {
    var txn: Transaction
    let dbs: [Database]
    /// The projection's name.
    public let name: String
    /// Last applied seq.
    public internal(set) var checkpoint: UInt64
    /// The state digest after ``checkpoint``.
    public internal(set) var digest: Digest
    /// Whether the digest is maintained (always for live and shadow state).
    let tracksDigest: Bool

    init(txn: Transaction, dbs: [Database], name: String, checkpoint: UInt64, digest: Digest, tracksDigest: Bool = true) {
        self.txn = txn
        self.dbs = dbs
        self.name = name
        self.checkpoint = checkpoint
        self.digest = digest
        self.tracksDigest = tracksDigest
    }

    /// Lends the value under `key` in database `db`.
    public func withValue<R>(_ db: Int, key: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try txn.withValue(dbs[db], key: key, body)
    }

    /// Copies out the value under `key` in database `db`.
    public func get(_ db: Int, key: some Collection<UInt8>) throws -> [UInt8]? {
        try txn.get(dbs[db], key: key)
    }

    /// Stores `value` under `key`, updating the digest. Writing the value already stored
    /// is a no-op.
    public func put(_ db: Int, key: [UInt8], value: [UInt8]) throws {
        if tracksDigest {
            // Compare and hash the old value where it lies in the map: no copy.
            let unchanged = try value.withUnsafeBytes { new in
                try withValue(db, key: key) { old -> Bool in
                    if old.elementsEqual(new) { return true }
                    digest = digest.subtracting(ProjectionStore.entryHash(db, key, old))
                    return false
                }
            }
            if unchanged == true { return }
            digest = digest.adding(ProjectionStore.entryHash(db, key, value))
        }
        try txn.put(dbs[db], key: key, value: value)
    }

    /// Stores a key that must be new (index entries ending in a seq): skips the lookup of
    /// an old value that ``put(_:key:value:)`` makes. With `append`, the key must also sort
    /// after every key in the database (keys that start with the seq).
    /// - throws: ``LMDBError`` `MDB_KEYEXIST` when the key is present (or not last, with `append`).
    public func insert(_ db: Int, key: [UInt8], value: [UInt8], append: Bool = false) throws {
        let flags = UInt32(MDB_NOOVERWRITE) | (append ? UInt32(MDB_APPEND) : 0)
        do {
            try txn.put(dbs[db], key: key, value: value, flags: flags)
        } catch let e as LMDBError where e.code == MDB_KEYEXIST {
            throw LedgerError(.projectionStale, "\(name): entry \(PageToken(key)) of database \(db) is already present")
        }
        if tracksDigest { digest = digest.adding(ProjectionStore.entryHash(db, key, value)) }
    }

    /// Removes `key`, updating the digest.
    public func delete(_ db: Int, key: [UInt8]) throws {
        if tracksDigest, let old = try get(db, key: key) {
            digest = digest.subtracting(ProjectionStore.entryHash(db, key, old))
        }
        try txn.delete(dbs[db], key: key)
    }

    /// Iterates database `db` in key order from `start`; `body` returns false to stop.
    public func scan(_ db: Int, from start: [UInt8]? = nil, reverse: Bool = false,
                     _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try txn.scan(dbs[db], from: start, reverse: reverse, body)
    }

    /// Entries in database `db`.
    public func count(_ db: Int) throws -> Int { try txn.count(dbs[db]) }

    /// SHA-256(db index ‖ varint key length ‖ key ‖ value), hashed from a stack buffer:
    /// this runs for every projection write, so it allocates nothing for small entries.
    static func entryHash(_ db: Int, _ key: [UInt8], _ value: some Collection<UInt8>) -> Digest {
        withBytes(value) { v in entryHash(db, key, v) }
    }

    static func entryHash(_ db: Int, _ key: [UInt8], _ value: UnsafeRawBufferPointer) -> Digest {
        let size = 11 + key.count + value.count
        return withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer in
            var n = 0
            func byte(_ b: UInt8) { buffer[n] = b; n += 1 }
            byte(UInt8(db))
            var length = UInt64(key.count)
            while length >= 0x80 { byte(UInt8(length & 0x7F) | 0x80); length >>= 7 }
            byte(UInt8(length))
            for b in key { byte(b) }
            if value.count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[n..<n + value.count]).copyMemory(from: value)
                n += value.count
            }
            return Digest.sha256(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// Recomputes the digest from every entry (verification of the running digest).
    func recomputeDigest() throws -> Digest {
        var d = Digest.zero
        for (i, db) in dbs.enumerated() {
            try txn.scan(db) { k, v in
                d = d.adding(ProjectionStore.entryHash(i, Array(k), v))
                return true
            }
        }
        return d
    }
}
