import CLMDB

/// Reads the log inside a transaction (read or write).
public struct LogReader {
    let txn: Transaction
    let dbs: LogDatabases

    /// The last event's seq and hash, or ``LogHead/empty``.
    /// - throws: `corrupt_event` when the stored record is not 40 bytes.
    public func head() throws -> LogHead {
        try dbs.head.withValue(txn, key: MetaKey.head) { b in
            guard b.count == 40 else { throw Self.corruptRecord("head", "head", length: b.count, expected: 40) }
            guard Keys.readU64(b) <= Self.maxSeq else {
                throw LedgerError(.corruptEvent, "the head record names seq \(Keys.readU64(b)): it is damaged; run ledger verify",
                                  details: ["index": "head", "key": "head"])
            }
            return LogHead(seq: Keys.readU64(b), hash: Digest(bytes: UnsafeRawBufferPointer(rebasing: b[8..<40]))!)
        } ?? .empty
    }

    /// ``head()``, checked against the log's last key: what a write (or a rebuild that
    /// folds up to the head) begins from. A damaged head that claimed more would have the
    /// next append leave a gap (and a rebuild wait for events that never come), one that
    /// claimed less overwrite the end.
    /// - throws: `corrupt_event` when they disagree.
    func headMatchingLog() throws -> LogHead {
        let head = try head()
        let cursor = try Cursor(txn, dbs.events)
        defer { cursor.close() }
        let last = try cursor.last().map { $0.key.count == 8 ? Keys.readU64($0.key) : UInt64.max } ?? 0
        guard last == head.seq else {
            throw LedgerError(.corruptEvent, "the head record names seq \(head.seq) but the log ends at seq \(last): "
                + "the store is damaged, nothing was written; run ledger verify", details: ["index": "head", "key": "head"])
        }
        return head
    }

    /// Lends the stored value of event `seq` (hash ‖ canonical bytes).
    public func withRawEvent<R>(_ seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withUnsafeBytes(of: seq.bigEndian) { k in try txn.withValue(dbs.events, key: k, body) }
    }

    /// The time of event `seq` read from its fixed offset in the stored record, without
    /// decoding the event; nil when absent.
    func time(of seq: UInt64) throws -> Timestamp? {
        try withRawEvent(seq) { v -> Timestamp in
            // hash (32) ‖ format, type, version (3) ‖ seq (8) ‖ at (8)
            guard v.count >= 32 + 19 else {
                throw LedgerError(.corruptEvent, "stored event \(seq) is \(v.count) bytes, too short for its time")
            }
            return Timestamp(milliseconds: Int64(bitPattern: UInt64(bigEndian: v.loadUnaligned(fromByteOffset: 43, as: UInt64.self))))
        }
    }

    /// The store's id: the chain hash of its first event (it survives export and import);
    /// nil for an empty log. Every signed statement names it, so a signature made for one
    /// store never counts in another.
    public func storeId() throws -> Digest? {
        try withRawEvent(1) { v in
            guard v.count > 32 else { throw LedgerError(.corruptEvent, "stored event shorter than its hash") }
            return Digest(bytes: UnsafeRawBufferPointer(rebasing: v[0..<32]))!
        }
    }

    /// Decodes event `seq`; nil when absent.
    /// - throws: `corrupt_event` when the stored value does not decode or carries another seq
    ///   (an event moved under another key would otherwise be read as this one).
    public func event(_ seq: UInt64) throws -> StoredEvent? {
        try withRawEvent(seq) { v in
            let stored = try LogReader.decode(v)
            guard stored.event.seq == seq else {
                throw LedgerError(.corruptEvent, "the event stored at seq \(seq) carries seq \(stored.event.seq)",
                                  details: ["seq": .number(Double(seq))])
            }
            return stored
        }
    }

    static func decode(_ value: UnsafeRawBufferPointer) throws -> StoredEvent {
        guard value.count > 32 else { throw LedgerError(.corruptEvent, "stored event shorter than its hash") }
        let hash = Digest(bytes: UnsafeRawBufferPointer(rebasing: value[0..<32]))!
        return StoredEvent(event: try EventCodec.decode(UnsafeRawBufferPointer(rebasing: value[32...])), hash: hash)
    }

    /// Visits events in seq order from `from` (inclusive); `body` returns false to stop.
    public func forEach(from: UInt64 = 1, _ body: (StoredEvent) throws -> Bool) throws {
        try forEachRaw(from: from) { seq, v in
            let stored = try LogReader.decode(v)
            // A record under another seq's key is damage: never print or export it as that seq.
            guard stored.seq == seq else { throw Self.misplaced(seq, carries: stored.seq) }
            return try body(stored)
        }
    }

    /// Visits events in seq order read in place (``EventView``), each with a `decode` that
    /// decodes it at most once however often it is called: the lean folds' reader.
    /// - throws: `corrupt_event` when a record is malformed or carries another seq than its key.
    public func forEachView(from: UInt64 = 1,
                            _ body: (EventView, _ decode: () throws -> Event) throws -> Bool) throws {
        // One slot for the decoded event, emptied only after an event that was decoded: an
        // `Event?` made and destroyed per event costs its value witnesses every time, and
        // few events are decoded in a fold.
        var decoded: Event?, holds = false
        try forEachRaw(from: from) { seq, v in
            let view: EventView
            do { view = try EventView(stored: v) } catch let e as LedgerError where e.details["seq"] == nil {
                var details = e.details
                details["seq"] = .number(Double(seq))
                throw LedgerError(e.code, "seq \(seq): \(e.message)", details: details)
            }
            guard view.seq == seq else { throw Self.misplaced(seq, carries: view.seq) }
            if holds {
                decoded = nil
                holds = false
            }
            return try body(view) {
                if holds, let decoded { return decoded }
                let event = try EventCodec.decode(view.bytes)
                decoded = event
                holds = true
                return event
            }
        }
    }

    static func misplaced(_ seq: UInt64, carries carried: UInt64) -> LedgerError {
        LedgerError(.corruptEvent, "the event stored at seq \(seq) carries seq \(carried)", details: ["seq": .number(Double(seq))])
    }

    /// Visits raw stored values (hash ‖ bytes) in seq order: verification reads these
    /// without decoding.
    /// - throws: `integrity_failure` at a seq the log lacks (seqs are dense: a gap is damage,
    ///   and a scan that stepped over it would print, export or fold a log without it).
    public func forEachRaw(from: UInt64 = 1, _ body: (_ seq: UInt64, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        if txn.isReadOnly { return try forEachRawAhead(from: from, body) }
        var expected = max(from, 1)
        try txn.scan(dbs.events, from: Keys.u64(from)) { k, v in
            guard k.count == 8 else { throw LedgerError(.integrityFailure, "event key of \(k.count) bytes") }
            let seq = Keys.readU64(k)
            guard seq == expected else { throw Self.missing(expected, next: seq) }
            expected += 1
            return try body(seq, v)
        }
    }

    /// The seqs of one id's entries in a `id ‖ 0x00 ‖ seq` index.
    func seqs(in index: LogIndex, of id: String) throws -> [UInt64] {
        let prefix = Keys.prefix(id)
        var out: [UInt64] = []
        try index.scan(txn, from: prefix) { k, _ in
            guard k.starts(with: prefix) else { return false }
            // A key of this id with a damaged seq part would end the scan early and hide
            // the entries after it: refuse it instead.
            guard k.count == prefix.count + 8 else {
                throw LedgerError(.corruptEvent, "\(index.name) entry of \(id) has a \(k.count - prefix.count)-byte seq, not 8",
                                  details: ["index": .string(index.name), "key": .string(id)])
            }
            out.append(Keys.readU64(k, at: prefix.count))
            return true
        }
        return out
    }

    /// Whether `actionId` was proposed: its `action_seqs` prefix exists. A proposal's
    /// duplicate check needs no more than this, not the stream decoded.
    public func hasAction(_ actionId: String) throws -> Bool {
        let prefix = Keys.prefix(actionId)
        var found = false
        try dbs.actionSeqs.scan(txn, from: prefix) { k, _ in
            found = k.starts(with: prefix)
            return false
        }
        return found
    }

    /// Every event of one action, in order.
    /// - throws: `corrupt_event` naming the `action_seqs` entry and the event when an entry
    ///   points to no event, to an event of another action, or to one whose type cannot stand
    ///   there (the stream starts with its one `action.proposed`): the command path never
    ///   judges an action by an index that disagrees with the log.
    public func actionEvents(_ actionId: String) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        for seq in try seqs(in: dbs.actionSeqs, of: actionId) {
            let stored = try indexed(dbs.actionSeqs, actionId, seq)
            let e = stored.event
            guard e.actionId == actionId else {
                throw Self.disagreement(dbs.actionSeqs, actionId, seq, e, "belongs to action \(e.actionId ?? "(none)")")
            }
            guard (e.type == .actionProposed) == out.isEmpty else {
                throw Self.disagreement(dbs.actionSeqs, actionId, seq, e, out.isEmpty
                    ? "is not the action.proposed every stream starts with" : "is a second action.proposed")
            }
            out.append(stored)
        }
        return out
    }

    /// The event an index entry points to.
    private func indexed(_ index: LogIndex, _ id: String, _ seq: UInt64) throws -> StoredEvent {
        guard let stored = try event(seq) else {
            throw LedgerError(.corruptEvent, "\(index.name) entry (\(id), seq \(seq)) points to no event",
                              details: ["index": .string(index.name), "key": .string(id), "seq": .number(Double(seq))])
        }
        return stored
    }

    static func disagreement(_ index: LogIndex, _ id: String, _ seq: UInt64, _ e: Event, _ what: String) -> LedgerError {
        LedgerError(.corruptEvent, "\(index.name) entry (\(id), seq \(seq)) disagrees with the event it points to: "
            + "seq \(seq), \(e.type.name) of \(e.actionId.map { "action \($0)" } ?? "person \(e.person)"), \(what)",
            details: ["index": .string(index.name), "key": .string(id), "seq": .number(Double(seq)),
                      "event_type": .string(e.type.name)])
    }

    /// A stored index or head value of the wrong length.
    static func corruptRecord(_ index: String, _ key: String, length: Int, expected: Int) -> LedgerError {
        LedgerError(.corruptEvent, "\(index) record \(key) is \(length) bytes, not \(expected)",
                    details: ["index": .string(index), "key": .string(key)])
    }

    /// The action's state folded from its stream; nil when it was never proposed.
    public func actionState(_ actionId: String) throws -> ActionState? {
        var state: ActionState?
        for stored in try actionEvents(actionId) {
            if case .proposed(let p) = stored.event.payload {
                state = ActionState(proposed: stored.event, proposal: p)
            } else {
                state?.apply(stored.event)
            }
        }
        return state
    }

    /// The device as its link and revocation events describe it; nil when never linked.
    public func deviceState(_ deviceId: String) throws -> DeviceState? {
        var state: DeviceState?
        for seq in try seqs(in: dbs.deviceSeqs, of: deviceId) {
            let e = try indexed(dbs.deviceSeqs, deviceId, seq).event
            // Only the device's own link (first), key rotations and revocation may stand in its stream.
            switch e.payload {
            case .deviceLinked(let d) where d.device == deviceId && state == nil:
                state = DeviceState(device: d.device, person: e.person, org: e.org, label: d.label,
                                    platform: d.platform, linkedAt: e.at, revokedAt: nil, key: d.key, keySeq: e.seq)
            case .deviceRevoked(let d) where d.device == deviceId && state != nil:
                state?.revokedAt = e.at
            case .deviceKeyRotated(let k) where k.device == deviceId && state != nil:
                state?.apply(k, seq: e.seq)
            default:
                throw Self.disagreement(dbs.deviceSeqs, deviceId, seq, e, state == nil
                    ? "not the device.linked of device \(deviceId) its stream starts with"
                    : "not a device.revoked or device.key_rotated of device \(deviceId)")
            }
        }
        return state
    }

    /// Every device ever linked, in id order.
    public func allDevices() throws -> [DeviceState] {
        var ids: [String] = []
        try dbs.deviceSeqs.scan(txn) { k, _ in
            guard k.count >= 9 else { throw Self.corruptRecord("device_seqs", "of \(k.count) bytes", length: k.count, expected: 9) }
            let id = String(decoding: k[..<(k.count - 9)], as: UTF8.self)
            if ids.last != id { ids.append(id) }
            return true
        }
        return try ids.compactMap { try deviceState($0) }
    }

    /// Every key a device holds or ever held (its link's and each rotation's), by
    /// fingerprint, naming the device that held it first. Device events are few.
    public func keysEverHeld() throws -> [Digest: String] {
        var held: [Digest: String] = [:]
        // One walk of every device's stream (device_seqs keys: id ‖ 0 ‖ seq), each event read once.
        var entries: [(String, UInt64)] = []
        try dbs.deviceSeqs.scan(txn) { k, _ in
            guard k.count >= 9 else { throw Self.corruptRecord("device_seqs", "of \(k.count) bytes", length: k.count, expected: 9) }
            entries.append((String(decoding: k[..<(k.count - 9)], as: UTF8.self), Keys.readU64(UnsafeRawBufferPointer(rebasing: k[(k.count - 8)...]))))
            return true
        }
        for (device, seq) in entries {
            switch try indexed(dbs.deviceSeqs, device, seq).event.payload {
            case .deviceLinked(let d): if let k = d.key { held[k.fingerprint] = held[k.fingerprint] ?? device }
            case .deviceKeyRotated(let k): held[k.key.fingerprint] = held[k.key.fingerprint] ?? device
            default: break
            }
        }
        return held
    }
}

enum MetaKey {
    static let head: [UInt8] = Array("head".utf8)
    static let policy: [UInt8] = Array("policy".utf8)
    /// `policy/ORG` → seq of the org's policy in force.
    static func policy(org: String) -> [UInt8] { Array(("policy/" + org).utf8) }
    /// `person/P` → the org the person is bound to.
    static func person(_ person: String) -> [UInt8] { Array(("person/" + person).utf8) }
}
