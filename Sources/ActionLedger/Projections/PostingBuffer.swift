import Foundation

/// Postings filed by a fold and not yet written, grouped by list (family ‖ id).
///
/// A fold files five to seven postings per event into a few hundred lists (people,
/// devices, specialists, surfaces), so filing must not allocate or run a general-purpose
/// hash per posting: list keys are interned once into an arena, found again through an
/// open-addressing table over a cheap hash of their bytes, and each list's postings are
/// appended to its own byte buffer (8 bytes each: the seq, big-endian).
struct PostingBuffer {
    /// Every interned key's bytes, back to back.
    private var arena: [UInt8] = []
    /// Per list: where its key lies in ``arena``, and its hash.
    private var keySpans: [(offset: Int, count: Int, hash: UInt64)] = []
    /// Per list: its postings, 8 bytes each, in filing order.
    private(set) var lists: [[UInt8]] = []
    /// Open addressing: list index + 1, 0 for an empty slot. A power of two, at most half full.
    private var slots: [Int32] = Array(repeating: 0, count: 64)
    /// Postings held (for the fold's memory budget).
    private(set) var count = 0
    /// The lists' reserved bytes: an array grows by doubling, so up to twice what it holds.
    private var reserved = 0
    /// The largest list's reserved bytes: what its next doubling adds at once.
    private var largest = 0

    var isEmpty: Bool { count == 0 }

    /// The bytes held: what a memory budget counts. The lists' reserved capacity with each
    /// one's header and allocation (~48 bytes), the keys, the table; and the largest list's
    /// next doubling, counted before it happens: one list (every event's seq in a by-time
    /// list) grows by megabytes at once, between two of the budget's checks.
    var approximateBytes: Int { reserved + largest + lists.count * 48 + arena.capacity + keySpans.capacity * 24 + slots.count * 4 }

    /// Files a posting under `key`.
    mutating func append(_ key: UnsafeRawBufferPointer, _ seq: UInt64) {
        let i = intern(key)
        let before = lists[i].capacity
        withUnsafeBytes(of: seq.bigEndian) { lists[i].append(contentsOf: $0) }
        if lists[i].capacity != before {
            reserved += lists[i].capacity - before
            largest = max(largest, lists[i].capacity)
        }
        count += 1
    }

    /// The postings filed under `key` (none when it has none), in filing order.
    func postings(_ key: UnsafeRawBufferPointer) -> [UInt8] {
        guard let i = find(key, Self.hash(key)).index else { return [] }
        return lists[i]
    }

    /// The list keys with postings, in LMDB's key order (memcmp, then length).
    func sortedKeys() -> [(key: [UInt8], list: Int)] {
        var out = keySpans.indices.filter { !lists[$0].isEmpty }.map { (key: key(at: $0), list: $0) }
        out.sort { bytesPrecede($0.key, $1.key) }
        return out
    }

    /// Forgets the postings but keeps the interned keys (a fold files into the same lists again).
    mutating func removeAllPostings() {
        for i in lists.indices { lists[i].removeAll(keepingCapacity: lists[i].count <= 4096) }
        reserved = lists.reduce(0) { $0 + $1.capacity }
        largest = lists.reduce(0) { max($0, $1.capacity) }
        count = 0
    }

    private func key(at i: Int) -> [UInt8] {
        let s = keySpans[i]
        return Array(arena[s.offset..<s.offset + s.count])
    }

    /// Keys are short (a family byte and an id): up to 32 bytes are hashed as four words
    /// (``wordHash(seed:count:_:wide:)``), longer ones byte by byte (FNV-1a).
    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        guard key.count <= 32 else {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in key { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            return h
        }
        return UInt64(bitPattern: Int64(wordHash(seed: 0, count: key.count, fourWords(key), wide: key.count > 16)))
    }

    /// The slot holding `key`'s list, or the empty slot where it would go.
    private func find(_ key: UnsafeRawBufferPointer, _ hash: UInt64) -> (slot: Int, index: Int?) {
        let mask = slots.count - 1
        var s = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = Int(slots[s])
            if entry == 0 { return (s, nil) }
            let span = keySpans[entry - 1]
            if span.hash == hash, span.count == key.count, arena.withUnsafeBytes({ a in
                key.count == 0 || memcmp(a.baseAddress! + span.offset, key.baseAddress!, key.count) == 0
            }) {
                return (s, entry - 1)
            }
            s = (s + 1) & mask
        }
    }

    private mutating func intern(_ key: UnsafeRawBufferPointer) -> Int {
        let h = Self.hash(key)
        let (slot, found) = find(key, h)
        if let found { return found }
        keySpans.append((arena.count, key.count, h))
        arena.append(contentsOf: key)
        lists.append([])
        slots[slot] = Int32(keySpans.count)
        if keySpans.count * 2 > slots.count { grow() }
        return keySpans.count - 1
    }

    private mutating func grow() {
        slots = Array(repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (i, span) in keySpans.enumerated() {
            var s = Int(truncatingIfNeeded: span.hash) & mask
            while slots[s] != 0 { s = (s + 1) & mask }
            slots[s] = Int32(i + 1)
        }
    }
}
