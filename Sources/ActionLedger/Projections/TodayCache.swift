/// The pending actions a Today fold has proposed, read or changed, held until the fold ends.
///
/// Most actions are proposed and decided within one fold (a rebuild folds up to a million
/// events at once): held here, such an action costs a map entry of a few words — no item,
/// no feed key, no string beyond its id, no B-tree write. A new action that survives the
/// fold is built once, when the cache is written back, from its proposal read by seq (the
/// policy that ranks it cannot have changed meanwhile: a `policy.set` writes the cache back
/// first). The store writes the cache back before anything reads it
/// (``ProjectionStore/flushCache()``), so a fold leaves the same bytes whichever way it went.
final class TodayCache: FoldCache {
    /// What the fold knows of one pending action. Plain words only (no reference to count):
    /// a fold moves it in and out of the map on every event of the action.
    struct Pending {
        /// The proposal's seq.
        var seq: UInt64
        var contentSeq: UInt64
        var steps = TapSteps()
        var heldUntil: Timestamp?
        var edits = 0
        /// Where in ``known`` its item and feed entry are: those the store holds (`isStored`)
        /// or, for a new action, those built from the decoded proposal; -1 for none.
        var known = -1
        var isStored = false
        var feedChanged = false

        init(seq: UInt64) {
            self.seq = seq
            contentSeq = seq
        }
    }

    /// A pending action's taps on its current content, two bits each.
    struct TapSteps {
        private var bits: UInt64 = 0
        private(set) var count = 0

        init() {}

        init(_ steps: [TapStep]) {
            for s in steps { append(s) }
        }

        mutating func append(_ step: TapStep) {
            if count < 32 { bits |= UInt64(step == .review ? 0 : step == .confirm ? 1 : 2) << (2 * UInt64(count)) }
            count += 1
        }

        /// - throws: `projection_stale` past 32 taps (an item holds at most 16).
        func array() throws -> [TapStep] {
            guard count <= 32 else { throw LedgerError(.projectionStale, "today: more than 32 taps on one content") }
            return (0..<count).map { i in [TapStep.review, .confirm, .approve][Int(bits >> (2 * UInt64(i)) & 3)] }
        }
    }

    /// A new action's item and feed entry as built from its decoded proposal.
    typealias Built = Stored

    final class Stored {
        let item: TodayProjection.Item
        let feed: TodayProjection.FeedEntry
        init(_ item: TodayProjection.Item, _ feed: TodayProjection.FeedEntry) {
            self.item = item
            self.feed = feed
        }
    }

    /// Items and feed entries the pending actions point at (``Pending/known``).
    private var known: [Stored] = []

    /// Action id → its pending state, for the actions this fold touched. Keyed by
    /// ``IdKey`` (no reference to count; hashed in a few words) from the id's bytes as the
    /// fold reads them in place.
    // Unchecked exclusivity, as ``ProjectionStore``'s fold state: one fold's, on one thread;
    // `update`'s change closures edit the one value they are lent and never reach the cache.
    @exclusivity(unchecked) private var slots: [IdKey: Pending] = [:]
    /// Stored items this fold removed: action id → the feed key the store holds it under.
    @exclusivity(unchecked) private var removed: [IdKey: [UInt8]] = [:]
    /// The bytes of the ids longer than an ``IdKey`` holds inline (rare).
    private var longIds: [IdKey: [UInt8]] = [:]

    /// The key of action id `bytes`, its bytes kept when the key cannot hold them.
    func key(_ bytes: UnsafeRawBufferPointer) -> IdKey {
        let k = IdKey(bytes)
        if !k.isInline, longIds[k] == nil { longIds[k] = Array(bytes) }
        return k
    }

    func key(_ id: String) -> IdKey {
        var s = id
        return s.withUTF8 { key(UnsafeRawBufferPointer($0)) }
    }

    private func bytes(_ k: IdKey) -> [UInt8] { k.isInline ? k.inlineBytes : longIds[k]! }
    private func text(_ k: IdKey) -> String { String(decoding: bytes(k), as: UTF8.self) }

    // A slot (key, pending state, the map's spare capacity) takes about 200 bytes of heap,
    // and as much again once written back: its item and feed entry, encoded, in a rebuild's
    // overlay (two entries of ~110 bytes with their map slots). A removed item's feed key
    // takes about 160; an item and feed entry read or built about 320.
    var approximateBytes: Int { slots.count * 420 + removed.count * 160 + known.count * 320 }

    /// Files a new pending action (a duplicate of a stored one is refused when written back).
    /// A fold that holds the decoded proposal gives its item and feed entry (`built`), so
    /// writing back need not read the proposal again.
    func propose(_ id: IdKey, seq: UInt64, built: Built? = nil) throws {
        var p = Pending(seq: seq)
        if let built {
            p.known = known.count
            known.append(built)
        }
        guard slots.updateValue(p, forKey: id) == nil else {
            throw LedgerError(.projectionStale, "today: action \(text(id)) is already pending")
        }
    }

    /// Changes the pending state of `id` (read from the store the first time).
    func update(_ id: IdKey, _ type: EventType, _ store: ProjectionStore, _ change: (inout Pending) -> Void) throws {
        // One hash lookup when the fold already holds it (the usual case): changed in place.
        if let i = slots.index(forKey: id) {
            let held = slots.values[i].heldUntil
            change(&slots.values[i])
            if slots.values[i].heldUntil != held { slots.values[i].feedChanged = true }
            return
        }
        var p = try stored(id, type, store)
        let held = p.heldUntil
        change(&p)
        if p.heldUntil != held { p.feedChanged = true }
        slots[id] = p
    }

    /// A decision or expiry: the action leaves the feed.
    func remove(_ id: IdKey, _ type: EventType, _ store: ProjectionStore) throws {
        if let p = slots.removeValue(forKey: id) {
            if p.isStored { removed[id] = known[p.known].item.feedKey }
            return
        }
        // Untouched by this fold (a decision on an action proposed before it: every tap
        // group's case): only the stored item's feed key is needed, not its feed entry.
        guard removed[id] == nil,
              let key = try store.withStoredValue(TodayProjection.items, key: bytes(id), { try TodayProjection.Item(decoding: $0).feedKey })
        else { throw LedgerError(.projectionStale, "\(type.name) for action \(text(id)), which is not pending") }
        removed[id] = key
    }

    /// The pending state of `id` as the store holds it (the fold has not touched it yet).
    private func stored(_ id: IdKey, _ type: EventType, _ store: ProjectionStore) throws -> Pending {
        if removed[id] == nil,
           let item = try store.withStoredValue(TodayProjection.items, key: bytes(id), { try TodayProjection.Item(decoding: $0) }) {
            guard let feed = try store.withStoredValue(TodayProjection.feed, key: item.feedKey, { try TodayProjection.FeedEntry(decoding: $0) }) else {
                throw LedgerError(.projectionStale, "no feed entry for pending action \(text(id))")
            }
            var p = Pending(seq: item.seq)
            p.contentSeq = item.contentSeq
            p.steps = TapSteps(item.steps)
            p.heldUntil = item.heldUntil
            p.edits = item.edits
            p.known = known.count
            p.isStored = true
            known.append(Stored(item, feed))
            return p
        }
        throw LedgerError(.projectionStale, "\(type.name) for action \(text(id)), which is not pending")
    }

    /// Writes every change into the store and empties the cache.
    func flush(into store: ProjectionStore) throws {
        for (id, key) in removed {
            try store.delete(TodayProjection.items, key: bytes(id))
            try store.delete(TodayProjection.feed, key: key)
        }
        removed.removeAll(keepingCapacity: true)
        // Every slot is a change: a proposal, or a stored action `update` changed (one only
        // read to be removed is not kept here). A new action whose proposal the fold only
        // noted by seq has it read from the log, in seq order: reads in log order find their
        // pages near the last one's, where the map's order sent each to a random page.
        var unread: [(IdKey, Pending)] = []
        for (id, p) in slots {
            if !p.isStored, p.known < 0 {
                unread.append((id, p))
            } else {
                try write(id, p, into: store)
            }
        }
        unread.sort { $0.1.seq < $1.1.seq }
        for (id, p) in unread { try write(id, p, into: store) }
        slots.removeAll(keepingCapacity: true)
        known.removeAll(keepingCapacity: true)
        longIds.removeAll()
    }

    /// Writes one pending action's item and feed entry: the stored ones it changed (the feed
    /// entry only when its hold did), or a new action's, built from its proposal when the
    /// fold did not hold it decoded.
    private func write(_ id: IdKey, _ p: Pending, into store: ProjectionStore) throws {
        // A stored action always has its item and feed entry in `known` (``stored(_:_:_:)``).
        var (item, feed) = try p.known >= 0 ? (known[p.known].item, known[p.known].feed)
            : TodayProjection.newItem(text(id), proposalSeq: p.seq, store)
        item.contentSeq = p.contentSeq
        item.steps = try p.steps.array()
        item.heldUntil = p.heldUntil
        item.edits = p.edits
        feed.heldUntil = p.heldUntil
        if p.isStored {
            try store.put(TodayProjection.items, key: bytes(id), value: item.encoded)
            if p.feedChanged { try store.put(TodayProjection.feed, key: item.feedKey, value: feed.encoded) }
        } else {
            try store.insert(TodayProjection.items, key: bytes(id), value: item.encoded)
            try store.insert(TodayProjection.feed, key: item.feedKey, value: feed.encoded)
        }
    }
}
