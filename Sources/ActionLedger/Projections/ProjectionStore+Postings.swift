import Foundation

/// Posting lists: for each (family, id), the seqs of the events filed under it, in order. They are what the audit and activity listings read; the rows
/// themselves are rendered from the log by seq when queried, so nothing here copies an event.
///
/// Stored in one `MDB_DUPSORT | MDB_DUPFIXED` database per projection generation: key =
/// family byte ‖ id (an empty id for a family with one list, e.g. every auto-ship),
/// duplicate = seq (8, BE). Seqs only grow, so a new posting always sorts after every
/// posting of its list; and event times never go backwards along the log, so a time window
/// is a seq range (``LogReader/firstSeq(atOrAfter:)``) and a posting needs no time of its own. A fold files
/// postings in memory and ``flushPostings()`` writes them, lists in key order, each list's
/// new postings in one `MDB_MULTIPLE | MDB_APPENDDUP` put at its right edge: one search per
/// list per fold instead of one per posting.
///
/// Like every projection entry, postings are hashed only when a check needs it
/// (`postingsDigest()`): `rebuild --verify` and the refold of `verify --deep` compare them
/// with what a fold derives.
extension ProjectionStore {
    /// A posting list's order-free digest and length.
    public struct ListDigest: Sendable, Equatable {
        public var digest = Digest.zero
        public var count = 0
        mutating func add(_ term: Digest) {
            digest = digest.adding(term)
            count += 1
        }
    }

    /// Every list's digest and length, by family ‖ id: of the stored lists with a replay's
    /// postings over them, or of a memory-only fold's.
    func listDigests() throws -> [[UInt8]: ListDigest] {
        try flushPostings()
        var out = overlay?.listDigests ?? [:]
        if let postingDatabase, !memoryOnly {
            try txn.scan(postingDatabase) { k, v in
                out[Array(k), default: ListDigest()].add(Self.postingHash(k, v))
                return true
            }
        }
        if let buffer = overlay?.postings {
            for (k, list) in buffer.sortedKeys() {
                k.withUnsafeBytes { kb in
                    buffer.lists[list].withUnsafeBytes { all in
                        for at in stride(from: 0, to: all.count, by: 8) {
                            out[k, default: ListDigest()].add(Self.postingHash(kb, UnsafeRawBufferPointer(rebasing: all[at..<at + 8])))
                        }
                    }
                }
            }
        }
        return out
    }

    /// Files event `seq` under `id` in posting family `family`.
    /// - throws: `projection_stale` when it does not sort after the list's last posting
    ///   (a fold applied out of order).
    public func post(_ family: Int, _ id: some Collection<UInt8>, seq: UInt64) throws {
        precondition(postingDatabase != nil || overlay != nil, "\(name) declares no postings")
        withTaggedKey(UInt8(family), id) { k in
            // Unretained: a rebuild files several postings per event (see `overlayRef`).
            if let overlayRef { return overlayRef._withUnsafeGuaranteedRef { $0.post(k, seq) } }
            pendingPostings.append(k, seq)
        }
    }

    /// Writes the postings filed since the last flush. Every fold driver calls it before it
    /// records the projection's checkpoint; reads of postings in the same transaction call
    /// it first, so they never miss one.
    /// - throws: `projection_stale` when a list's new postings do not follow its last one
    ///   (a fold applied out of order).
    public func flushPostings() throws {
        try flushCache()
        guard !pendingPostings.isEmpty, let postingDatabase else { return }
        try write(pendingPostings, to: postingDatabase)
        pendingPostings.removeAllPostings()
    }

    /// Writes `buffer`'s lists in key order, each list's postings in one
    /// `MDB_MULTIPLE | MDB_APPENDDUP` put at its right edge.
    func write(_ buffer: PostingBuffer, to postingDatabase: Database) throws {
        let cursor = try Cursor(txn, postingDatabase)
        defer { cursor.close() }
        for (key, list) in buffer.sortedKeys() {
            do {
                try key.withUnsafeBytes { k in
                    try buffer.lists[list].withUnsafeBytes { try cursor.putDuplicates(key: k, items: $0, size: 8, flags: .appendDuplicate) }
                }
            } catch let e as LMDBError where e.code == LMDBError.keyExists {
                throw LedgerError(.projectionStale, "\(name): postings of list \(PageToken(key)) do not follow its last one")
            }
        }
    }

    /// Visits the seqs filed under `id` in family `family`, oldest first, from the first
    /// at or after `start`; `body` returns false to stop. A query's replayed tail follows
    /// the stored postings (it is newer than all of them).
    public func postings(_ family: Int, _ id: some Collection<UInt8>, from start: UInt64 = 0,
                         _ body: (UInt64) throws -> Bool) throws {
        let key = [UInt8(family)] + Array(id)
        try flushPostings()
        if let postingDatabase, !memoryOnly {
            let cursor = try Cursor(txn, postingDatabase)
            defer { cursor.close() }
            var entry = try key.withUnsafeBytes { k in
                try withUnsafeBytes(of: start.bigEndian) { try cursor.seek(key: k, atLeast: $0) }
            }
            while let (_, v) = entry {
                guard v.count == 8 else {
                    throw LedgerError(.projectionStale, "\(name): a posting of \(v.count) bytes, not 8")
                }
                guard try body(Keys.readU64(v)) else { return }
                entry = try cursor.nextDuplicate()
            }
        }
        guard let buffer = overlay?.postings else { return }
        let replayed = key.withUnsafeBytes { buffer.postings($0) }
        try replayed.withUnsafeBytes { all in
            for at in stride(from: 0, to: all.count, by: 8) {
                let seq = Keys.readU64(UnsafeRawBufferPointer(rebasing: all[at..<at + 8]))
                guard seq >= start else { continue }
                guard try body(seq) else { return }
            }
        }
    }

    /// The order-free digest of every stored posting (and a replay's), as the running
    /// digest hashes entries: SHA-256(128 + family ‖ key length ‖ id ‖ seq), summed.
    func postingsDigest() throws -> Digest {
        try listDigests().values.reduce(Digest.zero) { $0.adding($1.digest) }
    }

    static func postingHash(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Digest {
        // Family byte offset by 128 so that a posting never hashes like an ordinary entry.
        entryHash(128 + Int(key.first ?? 0), UnsafeRawBufferPointer(rebasing: key.dropFirst()), value)
    }

    /// How many postings `id` has in `family` (stored and replayed).
    public func postingCount(_ family: Int, _ id: some Collection<UInt8>) throws -> Int {
        var n = 0
        try postings(family, id) { _ in n += 1; return true }
        return n
    }
}

/// LMDB's key order (memcmp, then length), without the generic element-by-element walk of
/// `lexicographicallyPrecedes`.
func bytesPrecede(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.withUnsafeBytes { x in
        b.withUnsafeBytes { y in
            let n = min(x.count, y.count)
            let c = n == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, n)
            return c != 0 ? c < 0 : x.count < y.count
        }
    }
}
