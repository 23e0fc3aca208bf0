/// The second half of `verify --deep`: every entry of the log's indexes (`log_index`:
/// `action_seqs`, `device_seqs`, `autoship_days`, `commands`, `meta`'s policy pointer) is
/// rederived from the events and compared, in bounded memory (Specs/integrity.md §3.1).
///
/// The chain covers the events only; the command path trusts the indexes (an action's
/// stream, a device's state, the daily auto-ship count, a command's replay), so an index
/// that disagrees with the log would make the engine decide on a false state.
///
/// How, without holding the index in memory:
/// 1. one pass over the log: each event's entries must exist (its `action_seqs` and
///    `device_seqs` key, its `autoship_days` key, a `commands` range covering its seq) and
///    the policy pointer must name the last `policy.set`;
/// 2. one scan of each range in key order: each entry must point to an event that has that
///    action, device or command id (and each stream starts with its proposal or link).
///
/// 1 and 2 together make each range exactly the set the log implies. `autoship_days`
/// holds counts, so its entries are checked ``chunk`` at a time, each chunk against one
/// more pass over the log that counts only auto-ship events (memory: one chunk).
struct IndexVerifier {
    let reader: LogReader
    /// `autoship_days` entries held per counting pass: the memory bound of that check.
    var chunk = 1 << 16

    private var dbs: LogDatabases { reader.dbs }

    func run() throws {
        try checkEvents()
        try checkStreams(dbs.actionSeqs)
        try checkStreams(dbs.deviceSeqs)
        try checkCommands()
        try checkAutoShipDays()
    }

    /// Pass 1: from each event to the entries it implies.
    private func checkEvents() throws {
        var lastPolicy: UInt64?
        // Per org and per person (bounded by the people, not the log): rules version 2's records.
        var orgPolicies: [String: UInt64] = [:]
        var personOrgs: [String: String] = [:]
        // Each device's latest recorded-refusal minute and its count (bounded by the devices).
        var refusals: [String: (minute: Int64, count: UInt32)] = [:]
        var lastRelyingParty: UInt64?
        let refusalsRegistered = try MetaLayout.layout(dbs, reader.txn) >= 4
        try reader.forEachRaw { seq, v in
            let f = try fields(seq, v)
            if let a = f.actionId { try requireEntry(dbs.actionSeqs, Keys.composite(a, seq), seq) }
            if let d = f.device { try requireEntry(dbs.deviceSeqs, Keys.composite(d, seq), seq) }
            if f.type == .actionAutoShipped {
                try requireEntry(dbs.autoShipDays, Keys.composite(f.person, UInt64(bitPattern: f.at.utcDay)), seq)
            }
            if f.type == .policySet {
                lastPolicy = seq
                orgPolicies[f.org] = seq
            }
            if f.type == .deviceLinked || f.type == .actionProposed, personOrgs[f.person] == nil { personOrgs[f.person] = f.org }
            if f.type == .storeRelyingParty { lastRelyingParty = seq }
            let key = Array(f.commandId.utf8)
            let range = try dbs.commands.withValue(reader.txn, key: key) { b in
                b.count == 12 ? (Keys.readU64(b), UInt64(UInt32(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))) : nil
            }
            if f.type == .tapRefused, let d = f.actingDevice {
                let last = refusals[d]
                refusals[d] = (f.at.minute, last.map { $0.minute == f.at.minute ? $0.count + 1 : 1 } ?? 1)
                // A recorded refusal registers its command id; a store written before that
                // rule had it unregistered (until `ledger migrate` registered it: layout 4),
                // or given to a later command (audit replay reports that as a spent proof replayed).
                if let r = range, let (first, count) = r, !(first <= seq && seq - first < count), first < seq {
                    throw Self.failure(dbs.commands, key, seq, "index_mismatch", "gives refused seq \(seq)'s command an earlier seq")
                }
                if range == nil, refusalsRegistered {
                    throw Self.failure(dbs.commands, key, seq, "index_missing", "has no entry for refused seq \(seq)")
                }
                return true
            }
            guard let range else { throw Self.failure(dbs.commands, key, seq, "index_missing", "has no entry for seq \(seq)") }
            guard let (first, count) = range, first <= seq, seq - first < count else {
                throw Self.failure(dbs.commands, key, seq, "index_mismatch", "does not cover seq \(seq), an event of that command")
            }
            return true
        }
        let pointer = try dbs.meta.withValue(reader.txn, key: MetaKey.policy) { $0.count == 8 ? Keys.readU64($0) : 0 }
        guard pointer == lastPolicy else {
            throw Self.failure(dbs.meta, MetaKey.policy, lastPolicy, "index_mismatch", "points to "
                + (pointer.map { "seq \($0)" } ?? "nothing") + "; the last policy.set is "
                + (lastPolicy.map { "seq \($0)" } ?? "none"))
        }
        if try MetaLayout.hasOrgRecords(dbs, reader.txn) { try checkOrgRecords(orgPolicies, personOrgs) }
        try checkRefusalRecords(refusals)
        let rp = try dbs.meta.withValue(reader.txn, key: MetaKey.relyingParty) { $0.count == 8 ? Keys.readU64($0) : 0 }
        guard rp == lastRelyingParty else {
            throw Self.failure(dbs.meta, MetaKey.relyingParty, lastRelyingParty, "index_mismatch", "points to "
                + (rp.map { "seq \($0)" } ?? "nothing") + "; the last store.relying_party is " + (lastRelyingParty.map { "seq \($0)" } ?? "none"))
        }
    }

    /// `refusals/DEVICE` in `meta` (the rate limit of recorded refusals) is exactly what the
    /// log implies: each device's latest `tap.refused` minute and its count; none more.
    private func checkRefusalRecords(_ refusals: [String: (minute: Int64, count: UInt32)]) throws {
        for (device, expected) in refusals {
            let stored = try reader.refusals(device: device)
            guard let stored, stored == expected else {
                throw Self.failure(dbs.meta, MetaKey.refusals(device), nil, stored == nil ? "index_missing" : "index_mismatch",
                                   "does not hold \(expected.count) refusal(s) in minute \(expected.minute)")
            }
        }
        let start = Array("refusals/".utf8)
        try dbs.meta.scan(reader.txn, from: start) { k, _ in
            guard k.starts(with: start) else { return false }
            let id = String(decoding: k[start.count...], as: UTF8.self)
            guard refusals[id] != nil else {
                throw Self.failure(dbs.meta, Array(k), nil, "index_mismatch", "names \(id), which no tap.refused implies")
            }
            return true
        }
    }

    /// `policy/ORG` and `person/P` in `meta` are exactly what the log implies: each org's
    /// last `policy.set`, each person's first org; no record more, none missing.
    private func checkOrgRecords(_ policies: [String: UInt64], _ people: [String: String]) throws {
        for (org, seq) in policies {
            let key = MetaKey.policy(org: org)
            let stored = try dbs.meta.withValue(reader.txn, key: key) { $0.count == 8 ? Keys.readU64($0) : 0 }
            guard stored == seq else {
                throw Self.failure(dbs.meta, key, seq, stored == nil ? "index_missing" : "index_mismatch",
                                   "does not name \(org)'s last policy.set, seq \(seq)")
            }
        }
        for (person, org) in people {
            let key = MetaKey.person(person)
            let stored = try dbs.meta.withValue(reader.txn, key: key) { String(decoding: $0, as: UTF8.self) }
            guard stored == org else {
                throw Self.failure(dbs.meta, key, nil, stored == nil ? "index_missing" : "index_mismatch",
                                   "binds \(person) to \(stored ?? "nothing"); the log binds her to \(org)")
            }
        }
        for (prefix, known) in [("policy/", Set(policies.keys)), ("person/", Set(people.keys))] {
            let start = Array(prefix.utf8)
            try dbs.meta.scan(reader.txn, from: start) { k, _ in
                guard k.starts(with: start) else { return false }
                let id = String(decoding: k[start.count...], as: UTF8.self)
                guard known.contains(id) else {
                    throw Self.failure(dbs.meta, Array(k), nil, "index_mismatch", "names \(id), which no event implies")
                }
                return true
            }
        }
    }

    private func requireEntry(_ index: LogIndex, _ key: [UInt8], _ seq: UInt64) throws {
        guard try index.withValue(reader.txn, key: key, { _ in true }) == nil else { return }
        throw Self.failure(index, key, seq, "index_missing", "is missing: seq \(seq) implies it")
    }

    /// Pass 2 for `action_seqs` and `device_seqs`: from each entry to its event.
    private func checkStreams(_ index: LogIndex) throws {
        let actions = index.name == dbs.actionSeqs.name
        var current: [UInt8] = []
        try index.scan(reader.txn) { k, v in
            let key = Array(k)
            guard k.count >= 10, k[k.count - 9] == 0, v.isEmpty else {
                throw Self.failure(index, key, nil, "index_mismatch", "is not an id ‖ 0x00 ‖ seq key with an empty value")
            }
            let id = Array(k[..<(k.count - 9)])
            let seq = Keys.readU64(k, at: k.count - 8)
            guard let f = try event(seq) else { throw Self.failure(index, key, seq, "index_mismatch", "points to no event") }
            let starts = id != current
            current = id
            let owner = actions ? f.actionId : f.device
            guard let owner, owner.utf8.elementsEqual(id) else {
                throw Self.failure(index, key, seq, "index_mismatch", "points to seq \(seq), a \(f.type.name) of "
                    + "\(owner ?? f.actionId ?? "no action or device")")
            }
            let first: EventType = actions ? .actionProposed : .deviceLinked
            guard (f.type == first) == starts,
                  actions || f.type == .deviceLinked || f.type == .deviceRevoked || f.type == .deviceKeyRotated else {
                throw Self.failure(index, key, seq, "index_mismatch", starts
                    ? "starts its stream with seq \(seq), a \(f.type.name), not a \(first.name)"
                    : "points to seq \(seq), a second \(first.name)")
            }
            return true
        }
    }

    /// Pass 2 for `commands`: each entry's range holds events of that command and nothing else.
    private func checkCommands() throws {
        try dbs.commands.scan(reader.txn) { k, v in
            let key = Array(k)
            guard v.count == 12 else { throw Self.failure(dbs.commands, key, nil, "index_mismatch", "has a \(v.count)-byte value, not 12") }
            let first = Keys.readU64(v)
            let count = UInt64(UInt32(bigEndian: v.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
            guard count > 0, first > 0, first <= LogReader.maxSeq, count <= UInt64(LogReader.maxCommandEvents) else { throw Self.failure(dbs.commands, key, first, "index_mismatch", "claims \(count) events from seq \(first)") }
            for seq in first..<(first + count) {
                guard let f = try event(seq), f.commandId.utf8.elementsEqual(k) else {
                    throw Self.failure(dbs.commands, key, seq, "index_mismatch", "claims seq \(seq), which is not an event of that command")
                }
            }
            return true
        }
    }

    /// Pass 2 for `autoship_days`: each entry's count is the number of auto-ships of that
    /// person on that UTC day, counted ``chunk`` entries per pass over the log.
    private func checkAutoShipDays() throws {
        let index = dbs.autoShipDays
        var start: [UInt8] = []
        while true {
            var order: [[UInt8]] = []
            var counts: [[UInt8]: (stored: UInt64, actual: UInt64, seq: UInt64?)] = [:]
            var next: [UInt8]?
            try index.scan(reader.txn, from: start) { k, v in
                guard order.count < chunk else { next = Array(k); return false }
                let key = Array(k)
                guard k.count >= 10, k[k.count - 9] == 0, v.count == 8 else {
                    throw Self.failure(index, key, nil, "index_mismatch", "is not a person ‖ 0x00 ‖ day key with an 8-byte count")
                }
                order.append(key)
                counts[key] = (Keys.readU64(v), 0, nil)
                return true
            }
            if order.isEmpty { return }
            try reader.forEachRaw { seq, v in
                // The type code is byte 1 of the event, after the 32-byte hash: only
                // auto-ships are decoded.
                guard v.count > 33, v[33] == EventType.actionAutoShipped.rawValue else { return true }
                let f = try fields(seq, v)
                let key = Keys.composite(f.person, UInt64(bitPattern: f.at.utcDay))
                if var c = counts[key] {
                    c.actual += 1
                    c.seq = c.seq ?? seq
                    counts[key] = c
                }
                return true
            }
            for key in order {
                let c = counts[key]!
                guard c.stored == c.actual else {
                    throw Self.failure(index, key, c.seq, "index_mismatch", "counts \(c.stored) auto-ships; the log has \(c.actual)")
                }
            }
            guard let next else { return }
            start = next
        }
    }

    /// The indexed fields of event `seq`, nil when absent.
    private func event(_ seq: UInt64) throws -> IndexedFields? {
        try reader.withRawEvent(seq) { try fields(seq, $0) }
    }

    private func fields(_ seq: UInt64, _ value: UnsafeRawBufferPointer) throws -> IndexedFields {
        do {
            guard value.count > 32 else { throw LedgerError(.corruptEvent, "shorter than its hash") }
            let f = try IndexedFields(UnsafeRawBufferPointer(rebasing: value[32...]))
            guard f.seq == seq else { throw LedgerError(.corruptEvent, "carries seq \(f.seq)") }
            return f
        } catch let e as LedgerError {
            throw ChainVerifier.failure(seq, "undecodable", "seq \(seq): the event does not decode: \(e.message)")
        }
    }

    /// `integrity_failure` naming the index, the entry's key and (when known) the seq.
    static func failure(_ index: LogIndex, _ key: [UInt8], _ seq: UInt64?, _ problem: String, _ what: String) -> LedgerError {
        let text = render(key)
        var details: JSONObject = ["problem": .string(problem), "index": .string(index.name), "key": .string(text),
                                   "key_hex": .string(Hex.encode(key))]
        if let seq { details["seq"] = .number(Double(seq)) }
        return LedgerError(.integrityFailure, "\(index.name) entry \(text) \(what)", details: details)
    }

    /// `id ‖ seq` for composite keys, the text alone otherwise.
    static func render(_ key: [UInt8]) -> String {
        guard key.count >= 10, key[key.count - 9] == 0 else { return String(decoding: key, as: UTF8.self) }
        let n = key.withUnsafeBytes { Keys.readU64($0, at: key.count - 8) }
        return "\(String(decoding: key[..<(key.count - 9)], as: UTF8.self)) ‖ \(n)"
    }
}
