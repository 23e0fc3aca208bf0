/// The Today feed: every pending action, ordered for its person by effective stakes (high
/// first) then age. What changes with `now` (expiry, holds) is filtered at query time,
/// so the fold itself never reads a clock. Items are pointers and counters: the proposal
/// and its latest edit are read from the log by seq when a page is rendered.
///
/// Databases:
/// - `items`: action id → ``TodayProjection/Item`` (pending actions only; removed on a decision or expiry).
/// - `feed`: person ‖ 0x00 ‖ rank (0 = high) ‖ time(proposed at) ‖ seq → ``TodayProjection/FeedEntry``
///   (what the query filters and groups on, so that only the page's items are read).
/// - `policy`: `policy/ORG` → the org's policy in force, folded from `policy.set` (it decides
///   the effective stakes, hence the order and the next tap). A new policy re-ranks the feed.
public struct TodayProjection: Projection {
    // Computed, not stored: the struct stays empty, so the fold copies it (an existential) without retaining anything.
    public var name: String { "today" }
    // 4: items hold pointers (proposal seq, content seq) and the rank, not the proposal.
    public var version: UInt32 { 4 }
    public var foldCost: Int { 5 }
    public var databases: [String] { ["items", "feed", "policy"] }
    static let items = 0, feed = 1, policyDB = 2
    static let policyKey = Array("policy".utf8)

    public init() {}

    /// A pending action as the feed keeps it.
    struct Item: Equatable {
        var person: String
        var org: String
        var proposedAt: Timestamp
        /// The proposal's seq.
        var seq: UInt64
        /// The seq of the event holding the current content: the proposal, or its latest edit.
        var contentSeq: UInt64
        /// The effective stakes it is ranked under (its feed key's rank).
        var stakes: Stakes
        /// The taps counted on the current content, in order (an edit empties it).
        var steps: [TapStep]
        var heldUntil: Timestamp?
        var edits: Int

        var encoded: [UInt8] {
            var w = BinaryWriter(capacity: 64)
            w.string(person)
            w.string(org)
            w.timestamp(proposedAt)
            w.fixed64(seq)
            w.fixed64(contentSeq)
            EventCodec.writeStakes(stakes, &w)
            w.varint(UInt64(steps.count))
            for step in steps { w.u8(step == .review ? 0 : step == .confirm ? 1 : 2) }
            w.optional(heldUntil) { $0.timestamp($1) }
            w.varint(UInt64(edits))
            return w.bytes
        }

        init(person: String, org: String, proposedAt: Timestamp, seq: UInt64, stakes: Stakes) {
            self.person = person
            self.org = org
            self.proposedAt = proposedAt
            self.seq = seq
            contentSeq = seq
            self.stakes = stakes
            steps = []
            heldUntil = nil
            edits = 0
        }

        init(decoding b: UnsafeRawBufferPointer) throws {
            var r = BinaryReader(b)
            person = try r.string()
            org = try r.string()
            proposedAt = try r.timestamp()
            seq = try r.fixed64()
            contentSeq = try r.fixed64()
            stakes = try EventCodec.readStakes(&r)
            let count = try r.varint()
            guard count <= 16 else { throw r.fail("too many taps") }
            steps = try (0..<count).map { _ in
                switch try r.u8() {
                case 0: return .review
                case 1: return .confirm
                case 2: return .approve
                default: throw r.fail("invalid tap step")
                }
            }
            heldUntil = try r.optional { try $0.timestamp() }
            edits = try r.count()
        }

        var feedKey: [UInt8] {
            var k = KeyBuilder()
            k.id(person)
            k.u8(UInt8(2 - stakes.rank))
            k.time(proposedAt)
            k.u64(seq)
            return k.bytes
        }
    }

    /// Reads, in place, the action id of an event the fold changes an item for.
    private func itemId(_ v: EventView, _ cache: TodayCache) throws -> IdKey {
        guard let id = v.actionId else { throw LedgerError(.corruptEvent, "\(v.type.name) without an action id") }
        return cache.key(v[id])
    }

    /// The fold's typed state of pending actions (see ``TodayCache``).
    static func cache(_ store: ProjectionStore) -> TodayCache {
        // A store serves one projection, so a Today store's cache is Today's.
        if let cache = store.foldCache { return unsafeDowncast(cache, to: TodayCache.self) }
        let cache = TodayCache()
        store.foldCache = cache
        return cache
    }

    /// Lends the fold's cache without retaining it (the store holds it; a fold's step never
    /// writes it back), so that a rebuild's every event costs no atomic reference count.
    @inline(__always)
    static func withCache<R>(_ store: ProjectionStore, _ body: (TodayCache) throws -> R) throws -> R {
        guard let ref = store.foldCacheRef else { return try body(cache(store)) }
        return try Unmanaged<TodayCache>.fromOpaque(ref.toOpaque())._withUnsafeGuaranteedRef(body)
    }

    /// Taps, edits, decisions and proposals read in place (a proposal is only noted by its
    /// seq: see ``TodayCache``); holds and policies decoded; events that change no pending
    /// action skipped.
    public func apply(_ v: EventView, to store: ProjectionStore, decode: () throws -> Event) throws {
        switch v.type {
        case .actionProposed:
            try Self.withCache(store) { try $0.propose(try itemId(v, $0), seq: v.seq) }
        case .actionReviewed, .actionConfirmed:
            let step: TapStep = v.type == .actionReviewed ? .review : .confirm
            try Self.withCache(store) { try $0.update(try itemId(v, $0), v.type, store) { $0.steps.append(step) } }
        case .actionEdited:
            let seq = v.seq
            try Self.withCache(store) { try $0.update(try itemId(v, $0), v.type, store) { Self.edit(&$0, seq) } }
        case .actionApproved, .actionAutoShipped, .actionDismissed, .actionExpired:
            try Self.withCache(store) { try $0.remove(try itemId(v, $0), v.type, store) }
        case .actionExecuted, .actionFailed, .deviceLinked, .deviceRevoked, .deviceKeyRotated, .personRecoveryKeySet, .storeCreated, .tapRefused, .storeRelyingParty, .tokenIssued, .tokenRevoked:
            return
        case .actionHeld, .policySet:
            try apply(try decode(), to: store)
        }
    }

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        switch event.payload {
        case .proposed(let p):
            let id = try actionId(event)
            let stakes = Policy.requirements(of: p, under: try Self.policy(store, org: event.org)).stakes
            let item = Item(person: event.person, org: event.org, proposedAt: event.at, seq: event.seq, stakes: stakes)
            let feed = FeedEntry(actionId: id, heldUntil: nil, expiresAt: p.expiresAt, specialist: p.specialist.name, kind: p.kind)
            let cache = Self.cache(store)
            try cache.propose(cache.key(id), seq: event.seq, built: TodayCache.Built(item, feed))
        case .reviewed:
            try update(event, store) { $0.steps.append(.review) }
        case .confirmed:
            try update(event, store) { $0.steps.append(.confirm) }
        case .held(let h):
            // The hold is in the feed entry too (the query filters on it without reading the item).
            try update(event, store) { $0.heldUntil = h.until }
        case .edited:
            let seq = event.seq
            try update(event, store) { Self.edit(&$0, seq) }
        case .approved, .autoShipped, .dismissed, .expired:
            let cache = Self.cache(store)
            try cache.remove(cache.key(try actionId(event)), event.type, store)
        case .policySet(let document):
            try rerank(under: document, org: event.org, store)
        case .executed, .failed, .deviceLinked, .deviceRevoked, .deviceKeyRotated, .recoveryKeySet, .storeCreated, .tapRefused, .relyingParty, .tokenIssued, .tokenRevoked:
            break  // not pending: nothing in the feed changes
        }
    }

    /// Changes the pending state of the action `event` names.
    private func update(_ event: Event, _ store: ProjectionStore, _ change: (inout TodayCache.Pending) -> Void) throws {
        let cache = Self.cache(store)
        try cache.update(cache.key(try actionId(event)), event.type, store, change)
    }

    /// An edit: the content is the edit's, and the taps start over.
    private static func edit(_ p: inout TodayCache.Pending, _ seq: UInt64) {
        p.contentSeq = seq
        p.steps = TodayCache.TapSteps()
        p.edits += 1
    }

    /// The item and feed entry of a new pending action, from its proposal read in place at
    /// `proposalSeq`, ranked under the org's policy the fold holds.
    static func newItem(_ id: String, proposalSeq seq: UInt64, _ store: ProjectionStore) throws -> (Item, FeedEntry) {
        guard let log = store.log else { preconditionFailure("today folds need the log") }
        // The proposal was noted by seq when folded and is read only now: a failure names
        // that seq, as if the fold had failed there.
        let built: (Item, FeedEntry)?
        do { built = try readItem(id, seq, log, store) } catch let e as LedgerError where e.details["seq"] == nil {
            throw ProjectionRegistry.naming("today", seq, e, "projection today cannot apply seq \(seq): \(e.message)")
        }
        guard let built else { throw LedgerError(.projectionStale, "the proposal of pending action \(id) is not at seq \(seq)",
                                                 details: ["projection": "today", "seq": .number(Double(seq))]) }
        return built
    }

    private static func readItem(_ id: String, _ seq: UInt64, _ log: LogReader, _ store: ProjectionStore) throws -> (Item, FeedEntry)? {
        try log.withRawEvent(seq) { raw -> (Item, FeedEntry) in
            let v = try EventView(stored: raw)
            let f = try v.proposalFacts()
            let kind = v.string(f.kind)
            var stakes = Policy.effectiveStakes(f.stakes, kind: kind, surface: v.string(f.surface),
                                                under: try policy(store, org: v.string(v.org)))
            if let pinned = f.pinnedStakes { stakes = max(stakes, pinned) }
            let item = Item(person: v.string(v.person), org: v.string(v.org), proposedAt: v.at, seq: seq, stakes: stakes)
            let feed = FeedEntry(actionId: id, heldUntil: nil, expiresAt: f.expiresAt, specialist: v.string(f.specialist), kind: kind)
            return (item, feed)
        }
    }

    /// The policy the fold holds for `org` (the built-in one until its first `policy.set`),
    /// read once per store: a fold asks for it with every proposal.
    static func policy(_ store: ProjectionStore, org: String) throws -> PolicyDocument {
        if let known = store.policies[org] { return known }
        let policy = try store.withStoredValue(policyDB, key: policyKey + Array("/\(org)".utf8)) { b in
            var r = BinaryReader(b)
            return try EventCodec.readPolicy(&r)
        } ?? .builtIn
        store.policies[org] = policy
        return policy
    }

    private func actionId(_ event: Event) throws -> String {
        guard let id = event.actionId else { throw LedgerError(.corruptEvent, "\(event.type.name) without an action id") }
        return id
    }

    /// Stores `org`'s new policy and moves every item of that org whose stakes it changes
    /// (each one's proposal read from the log: policies change rarely).
    private func rerank(under document: PolicyDocument, org: String, _ store: ProjectionStore) throws {
        try store.flushCache()  // the moves below read and write the stored items
        let old = try Self.policy(store, org: org)
        var w = BinaryWriter(capacity: 64)
        EventCodec.writePolicy(document, &w)
        try store.put(Self.policyDB, key: Self.policyKey + Array("/\(org)".utf8), value: w.bytes)
        store.policies[org] = document
        // Effective stakes depend on the policy's raise rules only.
        guard old.raise != document.raise else { return }
        var moves: [(id: [UInt8], item: Item, to: Stakes)] = []
        try store.scan(Self.items) { k, v in
            let item = try Item(decoding: v)
            guard item.org == org else { return true }
            guard let log = store.log, let stored = try log.event(item.seq), case .proposed(let p) = stored.event.payload else {
                throw LedgerError(.projectionStale, "the proposal of pending action \(String(decoding: k, as: UTF8.self)) is not at seq \(item.seq)")
            }
            let after = Policy.requirements(of: p, under: document).stakes
            if after != item.stakes { moves.append((Array(k), item, after)) }
            return true
        }
        for m in moves {
            guard let value = try store.get(Self.feed, key: m.item.feedKey) else {
                throw LedgerError(.projectionStale, "no feed entry for pending action \(String(decoding: m.id, as: UTF8.self))")
            }
            try store.delete(Self.feed, key: m.item.feedKey)
            var moved = m.item
            moved.stakes = m.to
            try store.put(Self.feed, key: moved.feedKey, value: value)
            try store.put(Self.items, key: m.id, value: moved.encoded)
        }
    }
}
