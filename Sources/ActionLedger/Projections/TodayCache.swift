/// The pending actions a Today fold has read or changed, held typed until the fold ends.
///
/// Most actions are proposed and decided within one fold (a rebuild folds a million events
/// at once): held here, such an action costs a map entry and never an encoded item, a feed
/// key or a B-tree write. A survivor is encoded once, when the cache is written back.
/// The store writes the cache back before anything reads it (``ProjectionStore/flushCache()``),
/// so a fold's result is the same bytes whichever way it went.
final class TodayCache: FoldCache {
    struct Pending {
        var item: TodayProjection.Item
        var feed: TodayProjection.FeedEntry
        /// The item as the store holds it (its feed key): nil for one proposed in this fold.
        var storedFeedKey: [UInt8]?
        var changed: Bool
        /// Whether the feed entry changed too (a hold): a tap changes the item only.
        var feedChanged: Bool
    }

    /// Action id → its pending state, for the actions this fold touched.
    private var slots: [String: Pending] = [:]
    /// Stored items this fold removed: action id → the feed key the store holds it under.
    private var removed: [String: [UInt8]] = [:]

    var approximateBytes: Int { (slots.count + removed.count) * 160 }

    /// Files a new pending action (a duplicate of a stored one is refused when written back).
    func propose(_ id: String, _ item: TodayProjection.Item, _ feed: TodayProjection.FeedEntry) throws {
        guard slots[id] == nil else { throw LedgerError(.projectionStale, "today: action \(id) is already pending") }
        slots[id] = Pending(item: item, feed: feed, storedFeedKey: nil, changed: true, feedChanged: true)
    }

    /// The pending state of `id` (read from the store the first time), changed in place.
    @discardableResult
    func update(_ id: String, _ type: EventType, _ store: ProjectionStore,
                _ change: (inout TodayProjection.Item, inout TodayProjection.FeedEntry) -> Void) throws -> TodayProjection.Item {
        var p = try pending(id, type, store)
        let held = p.feed.heldUntil
        change(&p.item, &p.feed)
        p.changed = true
        if p.feed.heldUntil != held { p.feedChanged = true }
        slots[id] = p
        return p.item
    }

    /// A decision or expiry: the action leaves the feed.
    func remove(_ id: String, _ type: EventType, _ store: ProjectionStore) throws {
        let p = try pending(id, type, store)
        slots.removeValue(forKey: id)
        if let key = p.storedFeedKey { removed[id] = key }
    }

    private func pending(_ id: String, _ type: EventType, _ store: ProjectionStore) throws -> Pending {
        if let p = slots[id] { return p }
        if removed[id] == nil,
           let item = try store.withStoredValue(TodayProjection.items, key: Array(id.utf8), { try TodayProjection.Item(decoding: $0) }) {
            let key = item.feedKey
            guard let feed = try store.withStoredValue(TodayProjection.feed, key: key, { try TodayProjection.FeedEntry(decoding: $0) }) else {
                throw LedgerError(.projectionStale, "no feed entry for pending action \(id)")
            }
            return Pending(item: item, feed: feed, storedFeedKey: key, changed: false, feedChanged: false)
        }
        throw LedgerError(.projectionStale, "\(type.name) for action \(id), which is not pending")
    }

    /// Writes every change into the store and empties the cache.
    func flush(into store: ProjectionStore) throws {
        for (id, key) in removed {
            try store.delete(TodayProjection.items, key: Array(id.utf8))
            try store.delete(TodayProjection.feed, key: key)
        }
        removed.removeAll(keepingCapacity: true)
        for (id, p) in slots where p.changed {
            let key = Array(id.utf8), feedKey = p.item.feedKey
            if p.storedFeedKey == nil {
                try store.insert(TodayProjection.items, key: key, value: p.item.encoded)
                try store.insert(TodayProjection.feed, key: feedKey, value: p.feed.encoded)
            } else {
                try store.put(TodayProjection.items, key: key, value: p.item.encoded)
                if p.feedChanged { try store.put(TodayProjection.feed, key: feedKey, value: p.feed.encoded) }
            }
        }
        slots.removeAll(keepingCapacity: true)
    }
}
