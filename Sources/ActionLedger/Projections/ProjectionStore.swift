/// A projection's view of one write (or read) transaction: its own logical databases
/// only, with its checkpoint.
///
/// All of a projection's logical databases share one LMDB database (`p/NAME/GEN`): logical
/// database `i` is the key range that starts with the byte `i`. A commit writes every B-tree
/// it touched, and each touched tree costs its own branch pages and catalogue record, so one
/// tree per projection (rather than one per index) keeps a durable commit's writes small.
///
/// Posting lists (``Projection/postings``) live beside it, in `p/NAME/GEN/segments`: see
/// `ProjectionStore+Postings.swift`. They hold pointers (seqs) only.
///
/// ``stateDigest()`` is a multiset hash of the whole state, computed when a check needs
/// it (never on the write path): the lane-wise sum of SHA-256(db index ‖ key length ‖ key ‖
/// value) over every entry (logical db and key, without the range byte), plus the
/// postings' terms. Two projections with equal digests hold equal entries, whatever order
/// they were written in.
public final class ProjectionStore {
    // The properties a fold touches with every event are `@exclusivity(unchecked)`: a store
    // serves one fold on one thread, and no access to them spans a call that could reach
    // them again, so the runtime's dynamic exclusivity check (a thread-local access set
    // updated on every access, in a loop run once per event) guards nothing here.
    var txn: Transaction
    /// The one LMDB database holding every logical database of this generation.
    let database: Database
    /// How many logical databases the projection declares.
    let databaseCount: Int
    /// Which generation ``database`` is (recorded again with the checkpoint at commit).
    let generation: UInt8
    /// The projection's name.
    public let name: String
    /// Last applied seq.
    @exclusivity(unchecked) public internal(set) var checkpoint: UInt64
    /// Set for a query's replay of the log's tail: writes stay in memory (see ``ProjectionOverlay``).
    let overlay: ProjectionOverlay?
    /// ``overlay`` unretained (the store holds it for its whole life): what a fold reaches
    /// with every posting, where an atomic reference count would stall it.
    let overlayRef: Unmanaged<ProjectionOverlay>?
    /// A fold of the whole log in memory (`rebuild --verify`, the refold): the overlay over
    /// nothing — the stored entries are not read.
    let memoryOnly: Bool
    /// The posting lists' segments (`p/NAME/GEN/segments`); nil for a projection without any.
    let postingDatabase: Database?
    /// The log, for folds that describe an event by its action's proposal.
    var log: LogReader?
    /// Actions' filings already read in this fold (bounded: see ``filing(_:)``).
    @exclusivity(unchecked) var filings: [IdKey: Filing] = [:]
    /// The writer's ``KnownFilings``, read only (shared with it, never copied).
    var knownFilings: [IdKey: Filing] = [:]
    /// The policies a fold read (Today's, per org), kept for the store's life: a fold's
    /// writes go through this store, so it sees every change.
    var policies: [String: PolicyDocument] = [:]
    /// Postings filed by this fold and not yet written, by family ‖ id: written as one
    /// segment per list by ``flushPostings()`` (see `ProjectionStore+Postings.swift`).
    @exclusivity(unchecked) var pendingPostings = PostingBuffer()
    /// A projection's typed state for the fold under way (Today's pending actions), written
    /// back by ``flushCache()`` before anything reads the store.
    var foldCache: (any FoldCache)? {
        didSet { foldCacheRef = foldCache.map { Unmanaged.passUnretained($0 as AnyObject) } }
    }
    /// ``foldCache`` unretained, for a fold that reaches it with every event: the store
    /// holds it strongly, and a fold's step never ends it (only ``flushCache()`` does).
    private(set) var foldCacheRef: Unmanaged<AnyObject>?

    init(txn: Transaction, database: Database, databaseCount: Int, generation: UInt8, name: String,
         checkpoint: UInt64, overlay: ProjectionOverlay? = nil, memoryOnly: Bool = false,
         postingDatabase: Database? = nil, log: LogReader? = nil) {
        precondition(!memoryOnly || overlay != nil, "a memory-only store keeps its state in an overlay")
        precondition(databaseCount <= 255, "a projection declares at most 255 logical databases")
        self.txn = txn
        self.database = database
        self.databaseCount = databaseCount
        self.generation = generation
        self.name = name
        self.checkpoint = checkpoint
        self.overlay = overlay
        overlayRef = overlay.map { Unmanaged.passUnretained($0) }
        self.memoryOnly = memoryOnly
        self.postingDatabase = postingDatabase
        self.log = log
    }

    /// The stored key of `key` in logical database `db` (its range byte, then the key);
    /// for tests that tamper with the store directly.
    static func physicalKey(_ db: Int, _ key: some Collection<UInt8>) -> [UInt8] {
        var k = [UInt8]()
        k.reserveCapacity(key.count + 1)
        k.append(UInt8(db))
        k.append(contentsOf: key)
        return k
    }

    /// Lends the physical key (range byte ‖ key) from a stack buffer.
    @inline(__always)
    private func withKey<R>(_ db: Int, _ key: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withTaggedKey(UInt8(db), key, body)
    }

    /// Lends the value under `key` in database `db`.
    public func withValue<R>(_ db: Int, key: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try flushCache()
        return try withKey(db, key) { k in try stored(k, body) }
    }

    /// ``withValue(_:key:_:)`` without writing the fold cache back: for the cache itself.
    func withStoredValue<R>(_ db: Int, key: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withKey(db, key) { k in try stored(k, body) }
    }

    /// Writes the fold cache back into the store (see ``foldCache``).
    public func flushCache() throws {
        guard let cache = foldCache else { return }
        foldCache = nil
        try cache.flush(into: self)
    }

    /// What the fold holds in memory, roughly: a rebuild's chunk is bounded by it.
    var approximateBytes: Int { (overlay?.approximateBytes ?? 0) + (foldCache?.approximateBytes ?? 0) + pendingPostings.approximateBytes }

    /// Lends the value under a physical key: the overlay's when it has one, else LMDB's.
    @inline(__always)
    private func stored<R>(_ k: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        if let overlay, let hit = overlay.lookup(k) {
            guard let value = hit else { return nil }
            return try value.withUnsafeBytes(body)
        }
        if memoryOnly { return nil }
        return try txn.withValue(database, key: k, body)
    }

    /// Copies out the value under `key` in database `db`.
    public func get(_ db: Int, key: some Collection<UInt8>) throws -> [UInt8]? {
        try withValue(db, key: key) { Array($0) }
    }

    /// Stores `value` under `key`.
    public func put(_ db: Int, key: [UInt8], value: [UInt8]) throws {
        try withKey(db, key) { k in
            if let overlay { return overlay.set(k, value) }
            try value.withUnsafeBytes { try txn.put(database, key: k, value: $0) }
        }
    }

    /// Stores a key that must be new (index entries ending in a seq): skips the lookup of
    /// an old value that ``put(_:key:value:)`` makes. With `append` (`MDB_APPEND`: LMDB
    /// writes at the tree's right edge without a search), the key must also sort after
    /// every stored key: only for seq-ordered keys in the projection's *last* logical database.
    /// - throws: `projection_stale` when the key is present (or, with `append`, not last).
    public func insert(_ db: Int, key: [UInt8], value: [UInt8], append: Bool = false) throws {
        precondition(!append || db == databaseCount - 1, "only the last logical database can be appended to")
        let flags: PutFlags = append ? [.noOverwrite, .append] : .noOverwrite
        func present() -> LedgerError {
            LedgerError(.projectionStale, "\(name): entry \(PageToken(key)) of database \(db) is already present")
        }
        do {
            try withKey(db, key) { k in
                if let overlay {
                    if memoryOnly {
                        guard overlay.insert(k, value) else { throw present() }
                        return
                    }
                    guard try stored(k, { _ in true }) == nil else { throw present() }
                    return overlay.set(k, value)
                }
                try value.withUnsafeBytes { try txn.put(database, key: k, value: $0, flags: flags) }
            }
        } catch let e as LMDBError where e.code == LMDBError.keyExists {
            throw present()
        }
    }

    /// Removes `key`.
    public func delete(_ db: Int, key: [UInt8]) throws {
        try withKey(db, key) { k in
            if let overlay { return memoryOnly ? overlay.remove(k) : overlay.set(k, nil) }
            try txn.delete(database, key: k)
        }
    }

    /// Iterates database `db` in key order from `start` (inclusive; from its first key, or
    /// with `reverse` its last, when nil); `body` returns false to stop.
    public func scan(_ db: Int, from start: [UInt8]? = nil, reverse: Bool = false,
                     _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try flushCache()
        let tag = UInt8(db)
        if memoryOnly, let overlay {
            return try overlay.mergedScan(nil, tag: tag, from: start.map { [tag] + $0 }, reverse: reverse, stored: nil, body)
        }
        let cursor = try Cursor(txn, database)
        defer { cursor.close() }
        var entry: Cursor.Entry?
        if let start {
            entry = try cursor.seek(atLeast: [tag] + start, reverse: reverse)
        } else if !reverse {
            entry = try cursor.seek(atLeast: [tag])
        } else {
            // The last key of range `tag` is the one before the first key of the next range.
            let next = tag == 255 ? nil : try cursor.seek(atLeast: [tag + 1])
            entry = try next == nil ? cursor.last() : cursor.previous()
        }
        if let overlay {
            let from = start.map { [tag] + $0 }
            return try overlay.mergedScan(cursor, tag: tag, from: from, reverse: reverse, stored: entry, body)
        }
        while let (k, v) = entry, k.first == tag {
            guard try body(UnsafeRawBufferPointer(rebasing: k.dropFirst()), v) else { return }
            entry = try reverse ? cursor.previous() : cursor.next()
        }
    }

    /// Entries in database `db`.
    public func count(_ db: Int) throws -> Int {
        var n = 0
        try scan(db) { _, _ in n += 1; return true }
        return n
    }

    /// Empties every logical database (a reset or a discarded shadow).
    func removeAll() throws {
        foldCache = nil
        precondition(overlay == nil, "a replay never empties the stored projection")
        try txn.drop(database)
        pendingPostings = PostingBuffer()
        if let postingDatabase { try txn.drop(postingDatabase) }
    }

    /// SHA-256(db index ‖ varint key length ‖ key ‖ value), hashed from a stack buffer:
    /// this runs for every projection write, so it allocates nothing for small entries.
    static func entryHash(_ db: Int, _ key: some Collection<UInt8>, _ value: some Collection<UInt8>) -> Digest {
        withBytes(key) { k in withBytes(value) { v in entryHash(db, k, v) } }
    }

    static func entryHash(_ db: Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Digest {
        let size = 11 + key.count + value.count
        return withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer in
            var n = 0
            func byte(_ b: UInt8) { buffer[n] = b; n += 1 }
            byte(UInt8(db))
            var length = UInt64(key.count)
            while length >= 0x80 { byte(UInt8(length & 0x7F) | 0x80); length >>= 7 }
            byte(UInt8(length))
            if key.count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[n..<n + key.count]).copyMemory(from: key)
                n += key.count
            }
            if value.count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[n..<n + value.count]).copyMemory(from: value)
                n += value.count
            }
            return Digest.sha256(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// The digest of the entries (not the postings): of the stored ones and, for a
    /// query's replay, its overlay's over them.
    /// - throws: `integrity_failure` for a stored key outside every logical database.
    public func entriesDigest() throws -> Digest {
        try flushCache()
        var d = Digest.zero
        guard overlay == nil else {
            for db in 0..<databaseCount {
                try scan(db) { k, v in
                    d = d.adding(ProjectionStore.entryHash(db, k, v))
                    return true
                }
            }
            return d
        }
        try txn.scan(database) { k, v in
            guard let db = k.first, Int(db) < databaseCount else {
                throw LedgerError(.integrityFailure, "\(name): key \(PageToken(k)) lies outside every logical database")
            }
            d = d.adding(ProjectionStore.entryHash(Int(db), UnsafeRawBufferPointer(rebasing: k.dropFirst()), v))
            return true
        }
        return d
    }

    /// The digest of the whole state: entries and postings.
    public func stateDigest() throws -> Digest { try entriesDigest().adding(try postingsDigest()) }
}

/// A projection's typed state for one fold, written back into its store when the fold
/// ends or before the store is read (so the stored bytes are the same either way).
protocol FoldCache: AnyObject {
    /// Writes every change into `store` (the cache is discarded afterwards).
    func flush(into store: ProjectionStore) throws
    /// Memory held, roughly.
    var approximateBytes: Int { get }
}
