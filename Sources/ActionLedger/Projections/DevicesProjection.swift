/// Linked devices per person: platform, label, when linked, last seen (the latest tap,
/// dismissal, edit or hold made from it), revoked.
///
/// Database `devices`: person ‖ 0x00 ‖ device id → ``DeviceRecord``. A device acts only
/// for its own person (the policy refuses others), so an event's person finds its device.
public struct DevicesProjection: Projection {
    // Computed, not stored: the struct stays empty, so the fold copies it (an existential) without retaining anything.
    public var name: String { "devices" }
    // 2: the logical databases share one LMDB database (ProjectionStore).
    public var version: UInt32 { 2 }
    public var foldCost: Int { 3 }
    public var databases: [String] { ["devices"] }

    public init() {}

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        switch event.payload {
        case .deviceLinked(let d):
            let key = Self.key(event.person, d.device)
            if try store.get(0, key: key) != nil {
                throw LedgerError(.duplicateDevice, "device \(d.device) is already linked")
            }
            let record = DeviceRecord(device: d.device, person: event.person, org: event.org, label: d.label,
                                      platform: d.platform, linkedAt: event.at)
            try store.put(0, key: key, value: record.encoded)
        case .deviceRevoked(let d):
            try update(event.person, d.device, store) {
                $0.revokedAt = event.at
                $0.revokeReason = d.reason
            }
        case .reviewed, .confirmed, .approved, .dismissed, .held, .edited:
            // Through the fold's cache, as a tap read in place is: a group's taps from one
            // device read and write its record once.
            guard let device = event.device else { return }
            let at = event.at
            try Self.key(event.person, device).withUnsafeBytes { k in
                try Self.cache(store).update(k, store) {
                    if $0.lastSeen.map({ $0 < at }) ?? true { $0.lastSeen = at }
                    $0.taps += 1
                }
            }
        default:
            break
        }
    }

    /// Taps read in place (no decode); links and revocations decoded.
    public func apply(_ v: EventView, to store: ProjectionStore, decode: () throws -> Event) throws {
        switch v.type {
        case .actionReviewed, .actionConfirmed, .actionApproved, .actionDismissed, .actionHeld, .actionEdited:
            guard let device = v.device else { return }
            let at = v.at, person = v[v.person], id = v[device]
            // The key (person ‖ 0 ‖ device) built on the stack: a tap allocates nothing here.
            try withUnsafeTemporaryAllocation(byteCount: person.count + 1 + id.count, alignment: 1) { k in
                if person.count > 0 { k.baseAddress!.copyMemory(from: person.baseAddress!, byteCount: person.count) }
                k[person.count] = 0
                if id.count > 0 { (k.baseAddress! + person.count + 1).copyMemory(from: id.baseAddress!, byteCount: id.count) }
                try Self.cache(store).update(UnsafeRawBufferPointer(k), store) {
                    if $0.lastSeen.map({ $0 < at }) ?? true { $0.lastSeen = at }
                    $0.taps += 1
                }
            }
        case .deviceLinked, .deviceRevoked:
            try store.flushCache()  // links and revocations read and write the stored records
            try apply(try decode(), to: store)
        default:
            break
        }
    }

    /// The fold's decoded records (see ``DevicesCache``).
    static func cache(_ store: ProjectionStore) -> DevicesCache {
        // A store serves one projection, so a devices store's cache is this one's.
        if let cache = store.foldCache { return unsafeDowncast(cache, to: DevicesCache.self) }
        let cache = DevicesCache()
        store.foldCache = cache
        return cache
    }

    static func key(_ person: String, _ device: String) -> [UInt8] {
        var k = KeyBuilder()
        k.id(person)
        k.bytes.append(contentsOf: device.utf8)
        return k.bytes
    }

    private func update(_ person: String, _ device: String, _ store: ProjectionStore,
                        _ change: (inout DeviceRecord) -> Void) throws {
        let key = Self.key(person, device)
        guard var record = try store.withValue(0, key: key, { try DeviceRecord(decoding: $0) }) else {
            throw LedgerError(.unknownDevice, "device \(device) is not linked to \(person)")
        }
        change(&record)
        try store.put(0, key: key, value: record.encoded)
    }
}

/// A linked device as the devices projection holds it.
public struct DeviceRecord: Sendable, Equatable {
    public var device: String
    public var person: String
    public var org: String
    public var label: String
    public var platform: Platform
    public var linkedAt: Timestamp
    public var revokedAt: Timestamp?
    public var revokeReason: String?
    /// The latest time it was used to act.
    public var lastSeen: Timestamp?
    /// How many actions were made from it.
    public var taps: Int

    init(device: String, person: String, org: String, label: String, platform: Platform, linkedAt: Timestamp) {
        self.device = device
        self.person = person
        self.org = org
        self.label = label
        self.platform = platform
        self.linkedAt = linkedAt
        taps = 0
    }

    var encoded: [UInt8] {
        var w = BinaryWriter(capacity: 96)
        w.string(device)
        w.string(person)
        w.string(org)
        w.string(label)
        w.string(platform.rawValue)
        w.timestamp(linkedAt)
        w.optional(revokedAt) { $0.timestamp($1) }
        w.optional(revokeReason) { $0.string($1) }
        w.optional(lastSeen) { $0.timestamp($1) }
        w.varint(UInt64(taps))
        return w.bytes
    }

    init(decoding b: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(b)
        device = try r.string()
        person = try r.string()
        org = try r.string()
        label = try r.string()
        let p = try r.string()
        guard let platform = Platform(rawValue: p) else { throw r.fail("unknown platform \(p)") }
        self.platform = platform
        linkedAt = try r.timestamp()
        revokedAt = try r.optional { try $0.timestamp() }
        revokeReason = try r.optional { try $0.string() }
        lastSeen = try r.optional { try $0.timestamp() }
        taps = try r.count()
    }

    public var json: JSON {
        ["device": .string(device), "person": .string(person), "label": .string(label),
         "platform": .string(platform.rawValue), "linked_at": .string(linkedAt.iso8601),
         "last_seen": lastSeen.map { .string($0.iso8601) } ?? .null, "taps": .number(Double(taps)),
         "revoked": .bool(revokedAt != nil), "revoked_at": revokedAt.map { .string($0.iso8601) } ?? .null,
         "revoke_reason": revokeReason.map(JSON.string) ?? .null]
    }
}
