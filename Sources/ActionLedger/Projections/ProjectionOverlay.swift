/// The in-memory writes of a projection replayed over a read snapshot.
///
/// Projections trail the log by up to ``ProjectionRegistry/maxLag`` events (a commit does
/// not fold every event into them; see ``ProjectionRegistry``). A query folds that tail
/// into an overlay: the projection's own code runs unchanged against a ``ProjectionStore``
/// whose writes land here, and whose reads and scans see these writes over the stored
/// entries. Nothing is written to LMDB, so a read-only transaction can do it.
final class ProjectionOverlay {
    /// Physical key (range byte ‖ key) → value, or nil where the replay deleted a stored entry.
    // Unchecked exclusivity, as ``ProjectionStore``'s fold state: one fold's, on one thread.
    @exclusivity(unchecked) private var entries: [ByteKey: [UInt8]?] = [:]
    /// The keys in LMDB's order, sorted on the first scan after a new key.
    private var sortedKeys: [[UInt8]]?
    /// Replayed postings by family ‖ id, in the order they were filed (seq order).
    @exclusivity(unchecked) private(set) var postings = PostingBuffer()
    /// With `digestOnly`, postings are not kept: only each list's digest and count, so a
    /// fold of the whole log in memory (`rebuild --verify`) holds memory ∝ lists, not events.
    let digestOnly: Bool
    private(set) var listDigests: [[UInt8]: ProjectionStore.ListDigest] = [:]
    /// The bytes of keys and values held (a rebuild's memory budget counts them).
    @exclusivity(unchecked) private(set) var entryBytes = 0

    init(digestOnly: Bool = false) { self.digestOnly = digestOnly }

    /// What the overlay holds, roughly, in bytes: entries and postings. An entry costs its
    /// bytes plus about 128: its map slot at the map's load (a 48-byte key, the value's
    /// reference) and the value's own allocation.
    var approximateBytes: Int { entryBytes + entries.count * 128 + postings.approximateBytes }

    func post(_ key: UnsafeRawBufferPointer, _ seq: UInt64) {
        guard digestOnly else { return postings.append(key, seq) }
        let term = withUnsafeBytes(of: seq.bigEndian) { ProjectionStore.postingHash(key, $0) }
        listDigests[Array(key), default: .init()].add(term)
    }

    /// The overlay's verdict on `key`: `.some(value)`, `.some(nil)` when deleted, nil when untouched.
    func lookup(_ key: UnsafeRawBufferPointer) -> [UInt8]?? {
        entries[ByteKey(key)]
    }

    /// Forgets `key` altogether (a memory-only fold: nothing is stored beneath to hide).
    func remove(_ key: UnsafeRawBufferPointer) {
        guard let old = entries.removeValue(forKey: ByteKey(key)) else { return }
        entryBytes -= key.count + (old?.count ?? 0)
        sortedKeys = nil
    }

    func set(_ key: UnsafeRawBufferPointer, _ value: [UInt8]?) {
        if let old = entries.updateValue(value, forKey: ByteKey(key)) {
            entryBytes += (value?.count ?? 0) - (old?.count ?? 0)
        } else {
            entryBytes += key.count + (value?.count ?? 0)
            sortedKeys = nil
        }
    }

    /// Sets a key that must be new to the overlay, in one hash lookup: false (and nothing
    /// changed) when it holds a value under `key` already. For a memory-only fold, where
    /// nothing is stored beneath.
    func insert(_ key: UnsafeRawBufferPointer, _ value: [UInt8]) -> Bool {
        let k = ByteKey(key)
        guard let old = entries.updateValue(value, forKey: k) else {
            entryBytes += key.count + value.count
            sortedKeys = nil
            return true
        }
        guard old == nil else {
            entries[k] = old
            return false
        }
        entryBytes += value.count
        return true
    }

    var keys: [[UInt8]] {
        if let sortedKeys { return sortedKeys }
        let sorted = entries.keys.map(\.bytes).sorted(by: bytesPrecede)
        sortedKeys = sorted
        return sorted
    }

    /// One entry to write: a physical key and its value, nil for a deletion.
    typealias Entry = (key: ByteKey, value: [UInt8]?)

    /// Hands over the entries in key order (inline keys compared as words) and forgets
    /// them: a rebuild writes them in parts, and holds them once, not twice.
    func takeSortedEntries() -> [Entry] {
        var sorted = Array(entries)
        entries = [:]
        sortedKeys = nil
        entryBytes = 0
        sorted.sort { ByteKey.precedes($0.key, $1.key) }
        return sorted
    }

    /// Writes `part` of an overlay's sorted entries into `store`'s database (deletions
    /// where the fold removed a stored entry). With `append` the database held none of
    /// the overlay's keys, so every key goes at its right edge (`MDB_APPEND`).
    static func write(_ part: ArraySlice<Entry>, to store: ProjectionStore, append: Bool) throws {
        precondition(store.overlay == nil, "an overlay is written to a stored projection")
        for (k, value) in part {
            try k.withBytes { k in
                guard let value else {
                    try store.txn.delete(store.database, key: k)
                    return
                }
                try value.withUnsafeBytes { try store.txn.put(store.database, key: k, value: $0, flags: append ? .append : []) }
            }
        }
    }

    /// Writes the postings, each list's as one segment after its last stored one.
    func writePostings(to store: ProjectionStore) throws {
        precondition(store.overlay == nil && !digestOnly, "an overlay is written to a stored projection")
        guard !postings.isEmpty else { return }
        guard let db = store.postingDatabase else { throw LedgerError(.projectionStale, "\(store.name) has no posting database") }
        try store.write(postings, to: db)
    }

    /// Walks range `tag` of `database` and of the overlay together, in key order (or
    /// reverse), an overlay entry hiding the stored one of the same key.
    /// - parameters:
    ///   - from: the first physical key to visit (the last, with `reverse`); nil for the
    ///     range's first (last) key.
    func mergedScan(_ cursor: Cursor?, tag: UInt8, from: [UInt8]?, reverse: Bool, stored first: Cursor.Entry?,
                    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let keys = self.keys
        var i = startIndex(keys, tag: tag, from: from, reverse: reverse)
        var entry = first
        func advanceStored() throws { entry = try reverse ? cursor!.previous() : cursor!.next() }
        while true {
            let c = entry.flatMap { $0.key.first == tag ? $0 : nil }
            let o = keys.indices.contains(i) && keys[i].first == tag ? keys[i] : nil
            let takeOverlay: Bool
            switch (o, c) {
            case (nil, nil): return
            case (_?, nil): takeOverlay = true
            case (nil, _?): takeOverlay = false
            case (let o?, let c?):
                // Forward: the overlay's key when it is ≤ the stored one; reverse: when ≥.
                takeOverlay = reverse ? !o.lexicographicallyPrecedes(c.key) : !c.key.lexicographicallyPrecedes(o)
            }
            if takeOverlay, let o {
                if let c, c.key.elementsEqual(o) { try advanceStored() }
                i += reverse ? -1 : 1
                guard case let value?? = entries[ByteKey(bytes: o)] else { continue }
                let more = try o.withUnsafeBytes { k in
                    try value.withUnsafeBytes { v in try body(UnsafeRawBufferPointer(rebasing: k.dropFirst()), v) }
                }
                if !more { return }
            } else if let c {
                guard try body(UnsafeRawBufferPointer(rebasing: c.key.dropFirst()), c.value) else { return }
                try advanceStored()
            }
        }
    }

    /// The index of the first overlay key to visit.
    private func startIndex(_ keys: [[UInt8]], tag: UInt8, from: [UInt8]?, reverse: Bool) -> Int {
        // First index whose key is ≥ `bound` (or > with `strictly`): a binary search.
        func partition(_ bound: [UInt8], strictly: Bool) -> Int {
            var low = 0, high = keys.count
            while low < high {
                let mid = (low + high) / 2
                let before = strictly ? !bound.lexicographicallyPrecedes(keys[mid]) : keys[mid].lexicographicallyPrecedes(bound)
                if before { low = mid + 1 } else { high = mid }
            }
            return low
        }
        if !reverse { return partition(from ?? [tag], strictly: false) }
        if let from { return partition(from, strictly: true) - 1 }
        return tag == 255 ? keys.count - 1 : partition([tag + 1], strictly: false) - 1
    }
}

/// A byte string as a dictionary key. Keys of up to 32 bytes (an action id, a feed key, a
/// device key: nearly all of them) are held inline, so a lookup allocates nothing; they
/// hash as four words in one pass instead of byte by byte as `[UInt8]` would.
struct ByteKey: Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private let count: Int
    private var heap: [UInt8]?

    init(_ b: UnsafeRawBufferPointer) {
        count = b.count
        if count <= 32 {
            words = fourWords(b)
        } else {
            heap = Array(b)
        }
    }

    init(bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { ByteKey($0) }
    }

    /// Lends the key's bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let heap { return try heap.withUnsafeBytes(body) }
        return try withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    /// LMDB's key order (bytewise, a prefix first). Inline keys compare as big-endian words:
    /// the zero padding past a shorter key ties with zeros in the longer one, and then the
    /// shorter (the prefix) comes first, as bytewise order has it.
    static func precedes(_ a: ByteKey, _ b: ByteKey) -> Bool {
        guard a.heap == nil, b.heap == nil else { return bytesPrecede(a.bytes, b.bytes) }
        if a.words.0 != b.words.0 { return a.words.0.bigEndian < b.words.0.bigEndian }
        if a.words.1 != b.words.1 { return a.words.1.bigEndian < b.words.1.bigEndian }
        if a.words.2 != b.words.2 { return a.words.2.bigEndian < b.words.2.bigEndian }
        if a.words.3 != b.words.3 { return a.words.3.bigEndian < b.words.3.bigEndian }
        return a.count < b.count
    }

    var bytes: [UInt8] {
        if let heap { return heap }
        return withUnsafeBytes(of: words) { Array($0.prefix(count)) }
    }

    func hash(into h: inout Hasher) {
        if let heap { return heap.withUnsafeBytes { h.combine(bytes: $0) } }
        h.combine(count)
        h.combine(words.0)
        h.combine(words.1)
        h.combine(words.2)
        h.combine(words.3)
    }

    /// Dictionary's hook for a key's hash under its table's seed: ``wordHash(seed:count:_:wide:)``
    /// for an inline key (a few nanoseconds, against SipHash's rounds of `hash(into:)`).
    func _rawHashValue(seed: Int) -> Int {
        if heap != nil {
            var h = Hasher()
            hash(into: &h)
            return h.finalize() ^ seed
        }
        return wordHash(seed: seed, count: count, words, wide: count > 16)
    }

    static func == (a: ByteKey, b: ByteKey) -> Bool {
        a.count == b.count && a.words == b.words && a.heap == b.heap
    }
}
