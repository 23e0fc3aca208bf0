import CLMDB

/// Reads the log inside a transaction (read or write).
public struct LogReader {
    let txn: Transaction
    let dbs: LogDatabases

    /// The last event's seq and hash, or ``LogHead/empty``.
    public func head() throws -> LogHead {
        try dbs.head.withValue(txn, key: MetaKey.head) { b in
            LogHead(seq: Keys.readU64(b), hash: Digest(bytes: UnsafeRawBufferPointer(rebasing: b[8..<40]))!)
        } ?? .empty
    }

    /// Lends the stored value of event `seq` (hash ‖ canonical bytes).
    public func withRawEvent<R>(_ seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withUnsafeBytes(of: seq.bigEndian) { k in try txn.withValue(dbs.events, key: k, body) }
    }

    /// Decodes event `seq`; nil when absent.
    public func event(_ seq: UInt64) throws -> StoredEvent? {
        try withRawEvent(seq) { try LogReader.decode($0) }
    }

    static func decode(_ value: UnsafeRawBufferPointer) throws -> StoredEvent {
        guard value.count > 32 else { throw LedgerError(.corruptEvent, "stored event shorter than its hash") }
        let hash = Digest(bytes: UnsafeRawBufferPointer(rebasing: value[0..<32]))!
        return StoredEvent(event: try EventCodec.decode(UnsafeRawBufferPointer(rebasing: value[32...])), hash: hash)
    }

    /// Visits events in seq order from `from` (inclusive); `body` returns false to stop.
    public func forEach(from: UInt64 = 1, _ body: (StoredEvent) throws -> Bool) throws {
        try txn.scan(dbs.events, from: Keys.u64(from)) { _, v in try body(try LogReader.decode(v)) }
    }

    /// Visits raw stored values (hash ‖ bytes) in seq order: verification reads these
    /// without decoding.
    public func forEachRaw(from: UInt64 = 1, _ body: (_ seq: UInt64, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        try txn.scan(dbs.events, from: Keys.u64(from)) { k, v in
            guard k.count == 8 else { throw LedgerError(.integrityFailure, "event key of \(k.count) bytes") }
            return try body(Keys.readU64(k), v)
        }
    }

    /// The seqs of one id's entries in a `id ‖ 0x00 ‖ seq` index.
    func seqs(in index: LogIndex, of id: String) throws -> [UInt64] {
        let prefix = Keys.prefix(id)
        var out: [UInt64] = []
        try index.scan(txn, from: prefix) { k, _ in
            guard k.count == prefix.count + 8, k.starts(with: prefix) else { return false }
            out.append(Keys.readU64(k, at: prefix.count))
            return true
        }
        return out
    }

    /// Every event of one action, in order.
    public func actionEvents(_ actionId: String) throws -> [StoredEvent] {
        try seqs(in: dbs.actionSeqs, of: actionId).compactMap { try event($0) }
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
            guard let e = try event(seq)?.event else { continue }
            switch e.payload {
            case .deviceLinked(let d):
                state = DeviceState(device: d.device, person: e.person, org: e.org, label: d.label,
                                    platform: d.platform, linkedAt: e.at, revokedAt: nil)
            case .deviceRevoked:
                state?.revokedAt = e.at
            default:
                break
            }
        }
        return state
    }

    /// Every device ever linked, in id order.
    public func allDevices() throws -> [DeviceState] {
        var ids: [String] = []
        try dbs.deviceSeqs.scan(txn) { k, _ in
            let id = String(decoding: k[..<(k.count - 9)], as: UTF8.self)
            if ids.last != id { ids.append(id) }
            return true
        }
        return try ids.compactMap { try deviceState($0) }
    }

    /// The policy in force: the latest `policy.set`, or the built-in version 0.
    public func policy() throws -> PolicyDocument {
        let seq = try dbs.meta.withValue(txn, key: MetaKey.policy) { Keys.readU64($0) }
        guard let seq, case .policySet(let p)? = try event(seq)?.event.payload else { return .builtIn }
        return p
    }

    /// Auto-ships recorded for `person` on UTC `day`.
    public func autoShipped(person: String, day: Int64) throws -> Int {
        try dbs.autoShipDays.withValue(txn, key: Keys.composite(person, UInt64(bitPattern: day))) { Int(Keys.readU64($0)) } ?? 0
    }

    /// The seqs a command appended, when it already ran.
    public func command(_ commandId: String) throws -> (first: UInt64, count: Int)? {
        try dbs.commands.get(txn, key: commandId.utf8).map { v in
            v.withUnsafeBytes { (Keys.readU64($0), Int(UInt32(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))) }
        }
    }
}

enum MetaKey {
    static let head: [UInt8] = Array("head".utf8)
    static let policy: [UInt8] = Array("policy".utf8)
}
