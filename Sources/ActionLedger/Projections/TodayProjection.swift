/// The Today feed: every pending action, ordered for its person by effective stakes (high
/// first) then age. What changes with `now` (expiry, holds) is filtered at query time,
/// so the fold itself never reads a clock.
///
/// Databases:
/// - `items`: action id → ``TodayProjection/Item`` (pending actions only; removed on a decision or expiry).
/// - `feed`: person ‖ 0x00 ‖ rank (0 = high) ‖ time(proposed at) ‖ seq → ``TodayProjection/FeedEntry``
///   (what the query filters and groups on, so that only the page's items are decoded).
/// - `policy`: `policy` → the policy in force, folded from `policy.set` (it decides the
///   effective stakes, hence the order and the next tap). A new policy re-ranks the feed.
public struct TodayProjection: Projection {
    public let name = "today"
    // 2: the logical databases share one LMDB database (ProjectionStore).
    public let version: UInt32 = 3
    public let databases = ["items", "feed", "policy"]
    static let items = 0, feed = 1, policyDB = 2
    static let policyKey = Array("policy".utf8)

    public init() {}

    /// A pending action as the feed shows it.
    struct Item: Equatable {
        var person: String
        var org: String
        var proposal: Proposal
        var proposedAt: Timestamp
        var seq: UInt64
        /// The taps counted on the current content, in order (an edit empties it).
        var steps: [TapStep]
        var heldUntil: Timestamp?
        var edits: Int

        var encoded: [UInt8] {
            var w = BinaryWriter(capacity: 256)
            w.string(person)
            w.string(org)
            w.timestamp(proposedAt)
            w.fixed64(seq)
            w.varint(UInt64(steps.count))
            for step in steps { w.u8(step == .review ? 0 : step == .confirm ? 1 : 2) }
            w.optional(heldUntil) { $0.timestamp($1) }
            w.varint(UInt64(edits))
            // The proposal as its event encodes it; the schema byte first (2 when it is pinned).
            w.u8(proposal.pinned == nil ? 1 : 2)
            EventCodec.encodePayload(.proposed(proposal), into: &w)
            return w.bytes
        }

        init(person: String, org: String, proposal: Proposal, proposedAt: Timestamp, seq: UInt64) {
            self.person = person
            self.org = org
            self.proposal = proposal
            self.proposedAt = proposedAt
            self.seq = seq
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
            edits = Int(try r.varint())
            let schema = try r.u8()
            guard schema == 1 || schema == 2, case .proposed(let p) = try EventCodec.decodePayload(.actionProposed, version: schema, &r) else {
                throw r.fail("not a proposal")
            }
            proposal = p
        }

        func feedValue(_ id: String) -> [UInt8] {
            FeedEntry(actionId: id, heldUntil: heldUntil, expiresAt: proposal.expiresAt,
                      specialist: proposal.specialist.name, kind: proposal.kind).encoded
        }

        func feedKey(_ stakes: Stakes) -> [UInt8] {
            var k = KeyBuilder()
            k.id(person)
            k.u8(UInt8(2 - stakes.rank))
            k.time(proposedAt)
            k.u64(seq)
            return k.bytes
        }
    }

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        switch event.payload {
        case .proposed(let p):
            let id = try actionId(event)
            let item = Item(person: event.person, org: event.org, proposal: p, proposedAt: event.at, seq: event.seq)
            try store.insert(Self.items, key: Array(id.utf8), value: item.encoded)
            try store.insert(Self.feed, key: item.feedKey(Policy.requirements(of: p, under: try policy(store, org: event.org)).stakes),
                             value: item.feedValue(id))
        case .reviewed:
            try update(event, store) { $0.steps.append(.review) }
        case .confirmed:
            try update(event, store) { $0.steps.append(.confirm) }
        case .held(let h):
            let item = try update(event, store) { $0.heldUntil = h.until }
            try store.put(Self.feed, key: item.feedKey(Policy.requirements(of: item.proposal, under: try policy(store, org: item.org)).stakes),
                          value: item.feedValue(try actionId(event)))
        case .edited(let e):
            try update(event, store) {
                $0.proposal.preview = e.preview
                $0.proposal.contentHash = e.contentHash
                $0.steps = []
                $0.edits += 1
            }
        case .approved, .autoShipped, .dismissed, .expired:
            let id = try actionId(event)
            let item = try pending(id, event, store)
            try store.delete(Self.items, key: Array(id.utf8))
            try store.delete(Self.feed, key: item.feedKey(Policy.requirements(of: item.proposal, under: try policy(store, org: item.org)).stakes))
        case .policySet(let document):
            try rerank(under: document, org: event.org, store)
        case .executed, .failed, .deviceLinked, .deviceRevoked, .deviceKeyRotated, .storeCreated, .tapRefused:
            break  // not pending: nothing in the feed changes
        }
    }

    /// The policy the fold holds for `org` (the built-in one until its first `policy.set`).
    static func policy(_ store: ProjectionStore, org: String) throws -> PolicyDocument {
        try store.withValue(policyDB, key: policyKey + Array("/\(org)".utf8)) { b in
            var r = BinaryReader(b)
            return try EventCodec.readPolicy(&r)
        } ?? .builtIn
    }

    private func policy(_ store: ProjectionStore, org: String) throws -> PolicyDocument { try Self.policy(store, org: org) }

    private func actionId(_ event: Event) throws -> String {
        guard let id = event.actionId else { throw LedgerError(.corruptEvent, "\(event.type.name) without an action id") }
        return id
    }

    private func pending(_ id: String, _ event: Event, _ store: ProjectionStore) throws -> Item {
        guard let item = try store.withValue(Self.items, key: Array(id.utf8), { try Item(decoding: $0) }) else {
            throw LedgerError(.projectionStale, "\(event.type.name) for action \(id), which is not pending")
        }
        return item
    }

    private func save(_ id: String, _ item: Item, _ store: ProjectionStore) throws {
        try store.put(Self.items, key: Array(id.utf8), value: item.encoded)
    }

    /// Changes a pending item; its feed key (stakes, time, seq) never changes here.
    @discardableResult
    private func update(_ event: Event, _ store: ProjectionStore, _ change: (inout Item) -> Void) throws -> Item {
        let id = try actionId(event)
        var item = try pending(id, event, store)
        change(&item)
        try save(id, item, store)
        return item
    }

    /// Stores `org`'s new policy and moves every item of that org whose stakes it changes.
    private func rerank(under document: PolicyDocument, org: String, _ store: ProjectionStore) throws {
        let old = try policy(store, org: org)
        var w = BinaryWriter(capacity: 64)
        EventCodec.writePolicy(document, &w)
        try store.put(Self.policyDB, key: Self.policyKey + Array("/\(org)".utf8), value: w.bytes)
        guard old.raise != document.raise else { return }
        var moves: [(from: [UInt8], to: [UInt8], value: [UInt8])] = []
        try store.scan(Self.items) { k, v in
            let item = try Item(decoding: v)
            guard item.org == org else { return true }
            let before = Policy.requirements(of: item.proposal, under: old).stakes
            let after = Policy.requirements(of: item.proposal, under: document).stakes
            if before != after {
                moves.append((item.feedKey(before), item.feedKey(after), item.feedValue(String(decoding: k, as: UTF8.self))))
            }
            return true
        }
        for m in moves {
            try store.delete(Self.feed, key: m.from)
            try store.put(Self.feed, key: m.to, value: m.value)
        }
    }
}

extension TodayProjection {
    /// A feed entry's value: enough to filter (holds, expiry) and group (specialist,
    /// kind) without reading the item.
    struct FeedEntry {
        var actionId: String
        var heldUntil: Timestamp?
        var expiresAt: Timestamp?
        var specialist: String
        var kind: String

        var encoded: [UInt8] {
            var w = BinaryWriter(capacity: 64)
            w.string(actionId)
            w.optional(heldUntil) { $0.timestamp($1) }
            w.optional(expiresAt) { $0.timestamp($1) }
            w.string(specialist)
            w.string(kind)
            return w.bytes
        }

        init(actionId: String, heldUntil: Timestamp?, expiresAt: Timestamp?, specialist: String, kind: String) {
            self.actionId = actionId
            self.heldUntil = heldUntil
            self.expiresAt = expiresAt
            self.specialist = specialist
            self.kind = kind
        }

        init(decoding b: UnsafeRawBufferPointer) throws {
            var r = BinaryReader(b)
            actionId = try r.string()
            heldUntil = try r.optional { try $0.timestamp() }
            expiresAt = try r.optional { try $0.timestamp() }
            specialist = try r.string()
            kind = try r.string()
        }

        /// Whether it needs its person at `now`: no hold running past now, not expired.
        func isDue(at now: Timestamp) -> Bool {
            !(heldUntil.map { $0 > now } ?? false) && !(expiresAt.map { $0 <= now } ?? false)
        }
    }
}
