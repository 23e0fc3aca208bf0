import ActionLedger
import Foundation

/// The responses kept for `Idempotency-Key` replays, and their retention.
///
/// A replay inside the retention gets its command's first response byte for byte. After it,
/// the response is gone, but the engine still knows the command id (registered in the log):
/// the replay appends nothing and answers the same status with the command's events and
/// the action as it is now (`LedgerServer.run`). So pruning never makes a replay unsafe;
/// the retention only bounds how long a replay's body is the original one.
extension SessionStore {
    /// A week: a phone offline over a long weekend still gets its queued taps' original
    /// answers, and it is well past the 24 h a signed tap's proof stays fresh (`proof.fresh`).
    static let defaultResponseRetention: Int64 = 7 * Timestamp.day
    /// Expired responses removed by each new one: more than one, so a backlog (after a
    /// quiet spell, or a shorter retention) drains while traffic goes on.
    static let pruneBatch = 16

    private static let responses = "responses"           // command id → the response its first run got
    private static let responseTimes = "response_times"  // stored at (8 bytes, big-endian ms) ‖ command id → ""
    private static let meta = "meta"
    private static let timedKey = Array("responses_timed".utf8)

    /// What a command's first run answered, for its replays (`Idempotency-Key`).
    struct StoredResponse: Sendable, Equatable {
        var status: Int
        var etag: String?
        var body: JSON
    }

    /// Says, to every server process on this store, that this one runs `commandId` until
    /// ``ran(_:)``: one whose engine finds the command already committed then waits for its
    /// kept response instead of answering with the engine's replay (two copies of a request
    /// sent at once to two servers get one body). An OFD lock on a byte named by the id, far
    /// past the file's end: a process that dies drops it, and a command made through the CLI
    /// holds none, so its replay is answered at once.
    /// - returns: whether it was taken (not when another process runs the same id).
    func runs(_ commandId: String) -> Bool { running.lock(Self.runningByte(commandId), shared: false) }

    func ran(_ commandId: String) { running.unlock(Self.runningByte(commandId)) }

    /// Whether another server process runs `commandId` now.
    func runsElsewhere(_ commandId: String) -> Bool { running.isHeldElsewhere(Self.runningByte(commandId), length: 1) }

    static func runningByte(_ commandId: String) -> Int64 {
        var id = commandId
        let digest = id.withUTF8 { Digest.sha256(UnsafeRawBufferPointer($0)) }
        // Below the range an Environment's lock-file claim uses (from 2⁶², LockFileClaim.swift).
        return (1 << 61) + Int64(digest.bytes.prefix(5).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// Keeps `r` as `commandId`'s response at `now`, and prunes up to ``pruneBatch`` expired ones.
    /// - parameter ifAbsent: keep nothing when a response within the retention is kept already.
    func keep(_ r: StoredResponse, commandId: String, at now: Timestamp, ifAbsent: Bool = false) throws {
        let record: JSON = ["status": .number(Double(r.status)), "etag": r.etag.map(JSON.string) ?? .null, "body": r.body,
                            "stored_at": .number(Double(now.milliseconds))]
        let key = Array(commandId.utf8)
        try environment.write { txn in
            let db = try txn.openDatabase(Self.responses)!, times = try txn.openDatabase(Self.responseTimes)!
            // A command that appended nothing is not registered, so it can run (and be kept) again.
            if let old = try txn.get(db, key: key), let at = Self.storedAt(try JSONParser.parse(old)) {
                if ifAbsent, now.milliseconds(since: at) <= responseRetention { return }
                _ = try txn.delete(times, key: Self.timeKey(at, key))
            }
            try txn.put(db, key: key, value: Array(record.serialized().utf8))
            try txn.put(times, key: Self.timeKey(now, key), value: [UInt8]())
            _ = try Self.prune(txn, before: now.adding(milliseconds: -responseRetention), limit: Self.pruneBatch)
        }
    }

    /// `commandId`'s first response, unless it was stored longer than the retention before `now`
    /// (an expired one not pruned yet counts as gone, so answers never depend on pruning's pace).
    func response(commandId: String, now: Timestamp) throws -> StoredResponse? {
        try environment.read { txn in
            guard let db = try txn.openDatabase(Self.responses, create: false),
                  let bytes = try txn.get(db, key: Array(commandId.utf8)) else { return nil }
            let o = try JSONParser.parse(bytes)
            guard case .number(let number)? = o["status"], let status = Int(exactly: number), (100...599).contains(status),
                  let body = o["body"],
                  let at = Self.storedAt(o), now.milliseconds(since: at) <= responseRetention else { return nil }
            var etag: String?
            if case .string(let e)? = o["etag"] { etag = e }
            return StoredResponse(status: status, etag: etag, body: body)
        }
    }

    /// Removes up to `limit` responses stored more than the retention before `now`; returns how many.
    @discardableResult
    func pruneResponses(now: Timestamp, limit: Int = .max) throws -> Int {
        try environment.write { txn in try Self.prune(txn, before: now.adding(milliseconds: -responseRetention), limit: limit) }
    }

    /// How many responses are stored (expired ones not yet pruned included).
    func storedResponses() throws -> Int {
        try environment.read { txn in try txn.openDatabase(Self.responses, create: false).map { try txn.count($0) } ?? 0 }
    }

    private static func prune(_ txn: Transaction, before cutoff: Timestamp, limit: Int) throws -> Int {
        guard let times = try txn.openDatabase(responseTimes, create: false), let db = try txn.openDatabase(responses, create: false) else {
            return 0
        }
        var expired: [[UInt8]] = []
        try txn.scan(times) { k, _ in
            guard expired.count < limit, k.count >= 8, time(of: k) < cutoff.milliseconds else { return false }
            expired.append(Array(k))
            return true
        }
        for k in expired {
            _ = try txn.delete(times, key: k)
            _ = try txn.delete(db, key: k.dropFirst(8))
        }
        return expired.count
    }

    /// Dates, once, the responses an older build kept without a time (so without retention):
    /// they are given `now` and expire one retention later, like any kept today.
    func dateUntimedResponses(now: Timestamp) throws {
        let done = try environment.read { txn in
            try txn.openDatabase(Self.meta, create: false).map { try txn.get($0, key: Self.timedKey) != nil } ?? false
        }
        guard !done else { return }
        try environment.write { txn in
            if let db = try txn.openDatabase(Self.responses, create: false) {
                var untimed: [([UInt8], JSON)] = []
                try txn.scan(db) { k, v in
                    let record = try JSONParser.parse(Array(v))
                    if Self.storedAt(record) == nil, case .object(var o) = record {
                        o["stored_at"] = .number(Double(now.milliseconds))
                        untimed.append((Array(k), .object(o)))
                    }
                    return true
                }
                let times = try txn.openDatabase(Self.responseTimes)!
                for (k, record) in untimed {
                    try txn.put(db, key: k, value: Array(record.serialized().utf8))
                    try txn.put(times, key: Self.timeKey(now, k), value: [UInt8]())
                }
            }
            try txn.put(try txn.openDatabase(Self.meta)!, key: Self.timedKey, value: Array("1".utf8))
        }
    }

    private static func storedAt(_ record: JSON) -> Timestamp? {
        guard case .number(let ms)? = record["stored_at"] else { return nil }
        // Read from the store: a damaged record's number must not trap the conversion.
        return Int64(exactly: ms).map(Timestamp.init(milliseconds:))
    }

    private static func timeKey(_ at: Timestamp, _ commandId: some Collection<UInt8>) -> [UInt8] {
        withUnsafeBytes(of: UInt64(bitPattern: at.milliseconds).bigEndian, Array.init) + commandId
    }

    private static func time(of key: UnsafeRawBufferPointer) -> Int64 {
        Int64(bitPattern: key.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
}
