/// The log's side of one write transaction: assigns seqs, chains hashes and writes the
/// log's indexes and head, nothing else — the projections are folded by the writer after
/// it (`ProjectionRegistry.fold(after:)`), so the log knows nothing of them. Only the
/// writer creates sessions, so there is one per write transaction.
final class AppendSession {
    /// The innermost open transaction: the command's nested one while a command runs.
    private(set) var txn: Transaction
    let dbs: LogDatabases
    private(set) var head: LogHead
    /// The time of the head event once read (``headTime()``); `.some(nil)` for an empty log.
    private var headAt: Timestamp??
    /// The head when the transaction began: nothing appended means nothing to record.
    private let initialHead: LogHead
    /// Counts the puts made through this session: a refused command that left it unchanged
    /// wrote nothing and needs no rollback (the writer's optimistic path).
    private(set) var writes = 0
    /// The events appended in this transaction, for the writer's fold to apply without
    /// decoding them back from the log; nil past ``retainLimit`` (an import), when the
    /// fold reads them from the log instead.
    private var appended: [Event]? = []
    static let retainLimit = 10_000
    /// State this transaction's commands read again and again, read once (``cached(_:_:_:)``):
    /// policies by org (each command reads its org's two or three times), persons' orgs and
    /// days' auto-ship counts (every proposal), devices' states (a group's taps come from a
    /// few devices), the store's id and relying party (every tap's proof check). An append
    /// that changes one drops or updates it (``index(_:)``), and a nested transaction that
    /// rolls back empties them all, so none outlives the state it was read from.
    private var known = Known()

    private struct Known {
        var policies: [String: PolicyDocument] = [:]
        var personOrgs: [String: String?] = [:]
        var autoShipCounts: [AutoShipDay: Int] = [:]
        var devices: [String: DeviceState?] = [:]
        /// Nil until read and found (the first append creates it).
        var storeId: Digest?
        /// `.some(nil)`: read, and none is set.
        var relyingParty: RelyingParty??
    }

    private struct AutoShipDay: Hashable {
        let person: String
        let day: Int64
    }

    var reader: LogReader { LogReader(txn: txn, dbs: dbs) }

    init(txn: Transaction, dbs: LogDatabases) throws {
        self.txn = txn
        self.dbs = dbs
        head = try LogReader(txn: txn, dbs: dbs).headMatchingLog()
        initialHead = head
    }

    /// Runs `body` in a nested transaction: its appends are kept when it returns, and on
    /// a throw both the LMDB writes and this session's in-memory head rewind. (Commands
    /// never touch the projections: the writer folds them after the session.)
    func nested<T>(_ body: () throws -> T) throws -> T {
        let parent = txn
        let saved = head
        let savedAt = headAt
        let savedCount = appended?.count
        do {
            return try parent.nested { child in
                use(child)
                defer { use(parent) }
                return try body()
            }
        } catch {
            head = saved
            headAt = savedAt
            known = Known()
            if let savedCount, appended != nil { appended!.removeSubrange(savedCount...) }
            throw error
        }
    }

    private func use(_ t: Transaction) {
        txn = t
    }

    /// Appends `event`, giving it the next seq; returns it as stored.
    @discardableResult
    func append(_ event: Event) throws -> StoredEvent {
        var event = event
        event.seq = head.seq + 1
        return try appendVerbatim(event, expectedHash: nil)
    }

    /// Appends `event` exactly as given (import, scenario set-up). Its seq must be the
    /// next one; with `expectedHash`, the chain hash it computes must equal it.
    @discardableResult
    func appendVerbatim(_ event: Event, expectedHash: Digest?) throws -> StoredEvent {
        guard event.seq == head.seq + 1 else {
            throw LedgerError(.invalidInput, "event seq \(event.seq) does not follow the head \(head.seq)")
        }
        // Times never go backwards along the log, and stay within 2000…2100 (TimeRules).
        guard event.at >= TimeRules.earliest, event.at < TimeRules.latest else {
            throw LedgerError(.invalidInput, "seq \(event.seq): time \(event.at.iso8601) is outside 2000…2100",
                              details: ["seq": .number(Double(event.seq)), "field": "at"])
        }
        // A well-formed time that goes backwards is a history the engine could not have
        // written (its clock is raised or refused first): decision replay's `time.monotonic`.
        if let before = try headTime(), event.at < before {
            throw LedgerError(.replayMismatch, "seq \(event.seq): time \(event.at.iso8601) is before the previous event's "
                + "\(before.iso8601); event times never go backwards (rule time.monotonic)",
                details: ["seq": .number(Double(event.seq)), "field": "at", "rule": "time.monotonic", "refusal": .null])
        }
        // The stored value is the chain hash, then the event's bytes: encoded after 32 bytes
        // left for the hash, so the value is built in one buffer.
        var value = EventCodec.encode(event, after: Digest.byteCount)
        let hash = value.withUnsafeBytes { Digest.sha256(head.hash, UnsafeRawBufferPointer(rebasing: $0[Digest.byteCount...])) }
        if let expectedHash, expectedHash != hash {
            throw LedgerError(.integrityFailure, "seq \(event.seq): hash \(expectedHash.hex) does not chain; "
                + "computed \(hash.hex)", details: ["seq": .number(Double(event.seq))])
        }
        writes += 1
        hash.withBytes { h in value.withUnsafeMutableBytes { $0.copyMemory(from: h) } }
        // Appended: seqs only ever grow; never overwritten: an existing seq is never replaced.
        try txn.put(dbs.events, key: Keys.u64(event.seq), value: value, flags: [.append, .noOverwrite])
        try index(event)
        if appended != nil {
            if appended!.count < Self.retainLimit { appended!.append(event) } else { appended = nil }
        }
        head = LogHead(seq: event.seq, hash: hash)
        headAt = .some(event.at)
        return StoredEvent(event: event, hash: hash)
    }

    /// `known[keyPath: map][key]`, read by `read` the first time.
    private func cached<K: Hashable, V>(_ map: WritableKeyPath<Known, [K: V]>, _ key: K, _ read: () throws -> V) rethrows -> V {
        if let v = known[keyPath: map][key] { return v }
        let v = try read()
        known[keyPath: map][key] = v
        return v
    }

    /// The policy in force for `org` (``LogReader/policy(org:)``), read once per transaction.
    func policy(org: String) throws -> PolicyDocument {
        try cached(\.policies, org) { try reader.policy(org: org) }
    }

    /// The org `person` is bound to (``LogReader/personOrg(_:)``), read once per transaction.
    func personOrg(_ person: String) throws -> String? {
        try cached(\.personOrgs, person) { try reader.personOrg(person) }
    }

    /// The device's state (``LogReader/deviceState(_:)``), read once per transaction.
    func deviceState(_ id: String) throws -> DeviceState? {
        try cached(\.devices, id) { try reader.deviceState(id) }
    }

    /// The store's id (``LogReader/storeId()``), read once per transaction once it exists.
    func storeId() throws -> Digest? {
        if known.storeId == nil { known.storeId = try reader.storeId() }
        return known.storeId
    }

    /// The relying party in force (``LogReader/relyingParty()``), read once per transaction.
    func relyingParty() throws -> RelyingParty? {
        if let rp = known.relyingParty { return rp }
        let rp = try reader.relyingParty()
        known.relyingParty = .some(rp)
        return rp
    }

    /// `person`'s auto-ships on `day` (``LogReader/autoShipped(person:day:)``), read once per transaction.
    func autoShipped(person: String, day: Int64) throws -> Int {
        try cached(\.autoShipCounts, AutoShipDay(person: person, day: day)) { try reader.autoShipped(person: person, day: day) }
    }

    /// The time of the log's last event (nil for an empty log), read once per transaction
    /// from its fixed offset in the stored record, without decoding the event.
    func headTime() throws -> Timestamp? {
        if let headAt { return headAt }
        let t: Timestamp? = head.seq == 0 ? nil : try reader.time(of: head.seq)
        headAt = .some(t)
        return t
    }

    private func index(_ event: Event) throws {
        let empty: [UInt8] = []
        try indexKeyRecords(event)
        if let actionId = event.actionId {
            try dbs.actionSeqs.put(txn, key: Keys.composite(actionId, event.seq), value: empty)
        }
        switch event.payload {
        case .deviceLinked(let d):
            try dbs.deviceSeqs.put(txn, key: Keys.composite(d.device, event.seq), value: empty)
            known.devices[d.device] = nil
            try bindPerson(event)
        case .proposed:
            try bindPerson(event)
        case .deviceRevoked(let d):
            try dbs.deviceSeqs.put(txn, key: Keys.composite(d.device, event.seq), value: empty)
            known.devices[d.device] = nil
        case .deviceKeyRotated(let k):
            try dbs.deviceSeqs.put(txn, key: Keys.composite(k.device, event.seq), value: empty)
            known.devices[k.device] = nil
        case .relyingParty:
            try dbs.meta.put(txn, key: MetaKey.relyingParty, value: Keys.u64(event.seq))
            known.relyingParty = nil
        case .tapRefused:
            // The rate limit's count of the device's recorded refusals in this minute.
            guard let device = event.device else { break }
            let last = try reader.refusals(device: device)
            let count = last.map { $0.minute == event.at.minute ? $0.count + 1 : 1 } ?? 1
            try dbs.meta.put(txn, key: MetaKey.refusals(device), value: LogReader.refusalRecord(minute: event.at.minute, count: count))
        case .policySet:
            known.policies = [:]
            try dbs.meta.put(txn, key: MetaKey.policy, value: Keys.u64(event.seq))
            try dbs.meta.put(txn, key: MetaKey.policy(org: event.org), value: Keys.u64(event.seq))
        case .autoShipped:
            let key = Keys.composite(event.person, UInt64(bitPattern: event.at.utcDay))
            let n = try autoShipped(person: event.person, day: event.at.utcDay)
            try dbs.autoShipDays.put(txn, key: key, value: Keys.u64(UInt64(n + 1)))
            known.autoShipCounts[AutoShipDay(person: event.person, day: event.at.utcDay)] = n + 1
        default:
            break
        }
    }

    /// The first event naming a person with an org binds the person to it (rules version 2).
    private func bindPerson(_ event: Event) throws {
        guard try personOrg(event.person) == nil else { return }
        try dbs.meta.put(txn, key: MetaKey.person(event.person), value: Array(event.org.utf8))
        known.personOrgs[event.person] = .some(event.org)
    }

    /// Records that `commandId` appended `count` events from `first`.
    func recordCommand(_ commandId: String, first: UInt64, count: Int) throws {
        writes += 1
        try dbs.commands.put(txn, key: commandId.utf8, value: LogReader.commandRecord(first: first, count: count), flags: .noOverwrite)
    }

    /// Indexes the command id of an event appended verbatim: a command's events are
    /// consecutive, so the id either is new or extends the range ending just before `seq`.
    func indexVerbatimCommand(_ commandId: String, seq: UInt64) throws {
        guard let (first, count) = try reader.command(commandId) else {
            return try recordCommand(commandId, first: seq, count: 1)
        }
        guard first + UInt64(count) == seq else {
            throw LedgerError(.invalidInput, "seq \(seq): command id \(commandId) already produced seqs \(first)…"
                + "\(first + UInt64(count) - 1); one command's events are consecutive", details: ["seq": .number(Double(seq))])
        }
        try dbs.commands.put(txn, key: commandId.utf8, value: LogReader.commandRecord(first: first, count: count + 1))
    }

    /// Writes the head: called once, just before commit (then the writer folds the
    /// projections, `ProjectionRegistry.fold(after:)`, which reads ``appendedEvents``).
    func finish() throws {
        // A transaction whose commands were all refused writes nothing, so the commit
        // leaves the file byte-for-byte unchanged (LMDB skips a commit with no dirty pages).
        guard head != initialHead else { return }
        var v = Keys.u64(head.seq)
        head.hash.withBytes { v.append(contentsOf: $0) }
        try dbs.head.put(txn, key: MetaKey.head, value: v)
    }

    /// Whether this transaction appended anything.
    var appendedAny: Bool { head != initialHead }

    /// The head before this transaction's appends.
    var headBefore: LogHead { initialHead }

    /// The events this transaction appended, in order; nil past ``retainLimit`` (an import),
    /// when a fold reads them from the log instead.
    var appendedEvents: [Event]? { appended }
}
