import Foundation

/// Posting lists: for each (family, id), the seqs of the events filed under it, in order.
/// They are what the audit and activity listings read; the rows themselves are rendered
/// from the log by seq when queried, so nothing here copies an event.
///
/// Stored as segments in one plain database per projection generation
/// (`p/NAME/GEN/segments`): key = family byte ‖ id ‖ 0x00 ‖ the segment's first seq (8, BE),
/// value = the segment's seqs (8 bytes each, BE, ascending). A fold files postings in
/// memory and ``flushPostings()`` writes each list's new postings as one segment: one entry
/// per list per fold, whatever the number of events it folded. Seqs only grow, so a new
/// segment starts after the list's last one (else the fold ran out of order:
/// `projection_stale`). Event times never go backwards along the log, so a time window is a
/// seq range (``LogReader/firstSeq(atOrAfter:)``) and a posting needs no time of its own.
///
/// Like every projection entry, postings are hashed only when a check needs it
/// (`postingsDigest()`), one term per posting whatever the segments: `rebuild --verify`
/// and the refold of `verify --deep` compare them with what a fold derives.
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
            // The digests are order-free, so the order the queries rely on is checked here:
            // a segment's key is its list, 0x00 and its first posting; its postings ascend,
            // and they follow the list's previous segment (the next key in LMDB's order).
            var previous: (list: [UInt8], last: UInt64)?
            try txn.scan(postingDatabase) { k, v in
                let list = Array(k.dropLast(9))
                var last = previous?.list == list ? previous!.last : 0
                let wellFormed = k.count > 9 && k[k.count - 9] == 0 && v.count > 0 && v.count % 8 == 0
                    && Keys.readU64(UnsafeRawBufferPointer(rebasing: k.suffix(8))) == Keys.readU64(v)
                    && Self.forEachPosting(v) { let seq = Keys.readU64($0); defer { last = seq }; return seq > last }
                guard wellFormed else {
                    throw LedgerError(.integrityFailure, "projection \(name): posting segment \(PageToken(k)) is malformed or out of "
                        + "order; `ledger rebuild --projection \(name)` rebuilds it from the log",
                                      details: ["problem": "projection_mismatch", "projection": .string(name)])
                }
                var digest = out[list, default: ListDigest()]
                _ = list.withUnsafeBytes { lb in Self.forEachPosting(v) { digest.add(Self.postingHash(lb, $0)); return true } }
                out[list] = digest
                previous = (list, last)
                return true
            }
        }
        if let buffer = overlay?.postings {
            for (k, list) in buffer.sortedKeys() {
                _ = k.withUnsafeBytes { kb in
                    buffer.lists[list].withUnsafeBytes { all in
                        Self.forEachPosting(all) { out[k, default: ListDigest()].add(Self.postingHash(kb, $0)); return true }
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

    /// Writes each of `buffer`'s lists as one segment, after the list's last stored one.
    func write(_ buffer: PostingBuffer, to postingDatabase: Database) throws {
        let cursor = try Cursor(txn, postingDatabase)
        defer { cursor.close() }
        for (list, index) in buffer.sortedKeys() {
            let items = buffer.lists[index]
            guard items.count >= 8 else { continue }
            let first = items.withUnsafeBytes { Keys.readU64($0) }
            let key = list + [0] + Keys.u64(first)
            // The list's last segment at or before this one must end before it starts.
            if let before = try cursor.seek(atLeast: key, reverse: true), Self.isSegment(before.key, of: list),
               Keys.readU64(before.value, at: before.value.count - 8) >= first {
                throw LedgerError(.projectionStale, "\(name): postings of list \(PageToken(list)) do not follow its last one")
            }
            try txn.put(postingDatabase, key: key, value: items, flags: .noOverwrite)
        }
    }

    /// Visits the 8-byte postings of a segment (or a fold's buffered list) in order, each
    /// as its bytes; false when `body` stopped it.
    @discardableResult
    static func forEachPosting(_ b: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Bool) rethrows -> Bool {
        for at in stride(from: 0, to: b.count - b.count % 8, by: 8) {
            guard try body(UnsafeRawBufferPointer(rebasing: b[at..<at + 8])) else { return false }
        }
        return true
    }

    /// Whether stored key `k` is a segment of `list` (family ‖ id): the list, 0x00, a seq.
    static func isSegment(_ k: UnsafeRawBufferPointer, of list: [UInt8]) -> Bool {
        k.count == list.count + 9 && k[list.count] == 0 && k.prefix(list.count).elementsEqual(list)
    }

    /// Visits the seqs filed under `id` in family `family`, oldest first, from the first
    /// at or after `start`; `body` returns false to stop. A query's replayed tail follows
    /// the stored postings (it is newer than all of them).
    public func postings(_ family: Int, _ id: some Collection<UInt8>, from start: UInt64 = 0,
                         _ body: (UInt64) throws -> Bool) throws {
        let list = [UInt8(family)] + Array(id)
        try flushPostings()
        // Postings only rise: a seq at or below the one before it (a duplicated posting, or a
        // replayed tail over postings a rolled-back checkpoint left stored) is damage, named,
        // never an entry listed twice or out of order.
        var last: UInt64?
        func rising(_ seq: UInt64) throws -> UInt64 {
            if let last, seq <= last {
                throw LedgerError(.projectionStale, "\(name): postings of list \(PageToken(list)) do not rise (\(seq) after \(last)); "
                    + "`ledger rebuild --projection \(name)` rebuilds them from the log")
            }
            last = seq
            return seq
        }
        if let postingDatabase, !memoryOnly {
            let cursor = try Cursor(txn, postingDatabase)
            defer { cursor.close() }
            // The segment holding `start`: the last one starting at or before it, else the
            // list's first.
            var entry = try cursor.seek(atLeast: list + [0] + Keys.u64(start), reverse: true)
            if let found = entry {
                if !Self.isSegment(found.key, of: list) { entry = try cursor.next() }
            } else {
                entry = try cursor.first()  // every key sorts after the target
            }
            while let (k, v) = entry, Self.isSegment(k, of: list) {
                guard v.count % 8 == 0, v.count > 0 else {
                    throw LedgerError(.projectionStale, "\(name): a posting segment of \(v.count) bytes")
                }
                guard try Self.forEachPosting(v, { let seq = try rising(Keys.readU64($0)); return try seq < start || body(seq) }) else {
                    return
                }
                entry = try cursor.next()
            }
            // The walk ran to the list's last stored segment: a replayed tail must follow it.
        }
        guard let buffer = overlay?.postings else { return }
        let replayed = list.withUnsafeBytes { buffer.postings($0) }
        _ = try replayed.withUnsafeBytes { all in
            try Self.forEachPosting(all) { let seq = try rising(Keys.readU64($0)); return try seq < start || body(seq) }
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

    /// Whether `seq` is filed under `id` in `family` (stored or replayed).
    public func hasPosting(_ family: Int, _ id: some Collection<UInt8>, _ seq: UInt64) throws -> Bool {
        var found = false
        try postings(family, id, from: seq) { found = $0 == seq; return false }
        return found
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
