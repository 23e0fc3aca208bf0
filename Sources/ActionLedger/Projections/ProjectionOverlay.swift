/// The in-memory writes of a projection replayed over a read snapshot.
///
/// Projections trail the log by up to ``ProjectionRegistry/maxLag`` events (a commit does
/// not fold every event into them; see ``ProjectionRegistry``). A query folds that tail
/// into an overlay: the projection's own code runs unchanged against a ``ProjectionStore``
/// whose writes land here, and whose reads and scans see these writes over the stored
/// entries. Nothing is written to LMDB, so a read-only transaction can do it.
final class ProjectionOverlay {
    /// Physical key (range byte ‖ key) → value, or nil where the replay deleted a stored entry.
    private(set) var entries: [[UInt8]: [UInt8]?] = [:]
    /// The keys in LMDB's order, sorted on the first scan after a new key.
    private var sortedKeys: [[UInt8]]?
    /// Replayed postings by family ‖ id, in the order they were filed (seq order).
    private(set) var postings: [[UInt8]: [ProjectionStore.Posting]] = [:]
    /// With `digestOnly`, postings are not kept: only each list's digest and count, so a
    /// fold of the whole log in memory (`rebuild --verify`) holds memory ∝ lists, not events.
    let digestOnly: Bool
    private(set) var listDigests: [[UInt8]: ProjectionStore.ListDigest] = [:]

    init(digestOnly: Bool = false) { self.digestOnly = digestOnly }

    func post(_ key: UnsafeRawBufferPointer, _ posting: ProjectionStore.Posting) {
        guard digestOnly else { return postings[Array(key), default: []].append(posting) }
        let term = posting.withBytes { ProjectionStore.postingHash(key, $0) }
        listDigests[Array(key), default: .init()].add(term)
    }

    /// The overlay's verdict on `key`: `.some(value)`, `.some(nil)` when deleted, nil when untouched.
    func lookup(_ key: UnsafeRawBufferPointer) -> [UInt8]?? {
        entries[Array(key)]
    }

    /// Forgets `key` altogether (a memory-only fold: nothing is stored beneath to hide).
    func remove(_ key: UnsafeRawBufferPointer) {
        if entries.removeValue(forKey: Array(key)) != nil { sortedKeys = nil }
    }

    func set(_ key: UnsafeRawBufferPointer, _ value: [UInt8]?) {
        if entries.updateValue(value, forKey: Array(key)) == nil { sortedKeys = nil }
    }

    var keys: [[UInt8]] {
        if let sortedKeys { return sortedKeys }
        let sorted = entries.keys.sorted { $0.lexicographicallyPrecedes($1) }
        sortedKeys = sorted
        return sorted
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
                guard case let value?? = entries[o] else { continue }
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
