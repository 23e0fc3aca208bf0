import ActionLedger
import CLMDB
import Foundation

/// The server's own state, in an LMDB file of its own beside the store (`NAME.sessions.lmdb`),
/// never in the log: device sessions (by the SHA-256 of their secret), when each device
/// last connected, and the responses kept for `Idempotency-Key` replays
/// (SessionStore+Responses.swift). Losing it signs devices out; it records no fact of the ledger.
final class SessionStore: Sendable {
    /// A device session, made by signing a challenge (`POST /v1/sessions`).
    struct Session: Sendable, Equatable {
        var id: String
        var device: String
        var person: String
        var org: String
        var createdAt: Timestamp
        var expiresAt: Timestamp
        var revokedAt: Timestamp?
        /// The fingerprint of the key that signed the session's challenge, and the seq of the
        /// event that put that key in force. A session proves only that key in that term:
        /// once the device's key is rotated (a lost or compromised key is rotated out) the
        /// session ends with it, and stays ended if the same key is rotated back in later.
        /// Nil in a record written before sessions were bound to their key: such a session is
        /// refused, and its device signs in again.
        var keyFingerprint: Digest?
        var keySeq: UInt64?

        var json: JSON {
            ["session_id": .string(id), "device": .string(device), "person": .string(person), "org": .string(org),
             "created_at": .string(createdAt.iso8601), "expires_at": .string(expiresAt.iso8601),
             "revoked_at": revokedAt.map { .string($0.iso8601) } ?? .null,
             "key_fingerprint": keyFingerprint.map { .string($0.hex) } ?? .null,
             "key_seq": keySeq.map { .number(Double($0)) } ?? .null]
        }

        init(id: String, device: String, person: String, org: String, createdAt: Timestamp, expiresAt: Timestamp,
             keyFingerprint: Digest?, keySeq: UInt64?) {
            (self.id, self.device, self.person, self.org, self.createdAt, self.expiresAt) = (id, device, person, org, createdAt, expiresAt)
            (self.keyFingerprint, self.keySeq) = (keyFingerprint, keySeq)
        }

        /// Whether the device still holds the key that signed this session in, in force since
        /// the same event.
        func isBound(to device: DeviceState) -> Bool {
            keyFingerprint != nil && keyFingerprint == device.key?.fingerprint && keySeq == device.keySeq
        }

        init(json: JSON) throws {
            guard case .object(let o) = json, case .string(let id)? = o["session_id"], case .string(let device)? = o["device"],
                  case .string(let person)? = o["person"], case .string(let org)? = o["org"],
                  case .string(let c)? = o["created_at"], let created = Timestamp(iso8601: c),
                  case .string(let e)? = o["expires_at"], let expires = Timestamp(iso8601: e) else {
                throw LedgerError(.storage, "a session record does not decode")
            }
            var fingerprint: Digest?
            if case .string(let f)? = o["key_fingerprint"] {
                guard let d = Digest(hex: f) else { throw LedgerError(.storage, "a session record's key_fingerprint does not decode") }
                fingerprint = d
            }
            var keySeq: UInt64?
            if case .number(let n)? = o["key_seq"], n >= 0, n < 9.0e15, n == n.rounded() { keySeq = UInt64(n) }
            self.init(id: id, device: device, person: person, org: org, createdAt: created, expiresAt: expires,
                      keyFingerprint: fingerprint, keySeq: keySeq)
            if case .string(let r)? = o["revoked_at"] { revokedAt = Timestamp(iso8601: r) }
        }
    }

    let environment: Environment
    /// Names, on the sessions file, the commands a server process is running now
    /// (SessionStore+Responses.swift, ``runs(_:)``).
    let running: RangeLock
    /// How long a command's first response is kept for its replays (milliseconds).
    let responseRetention: Int64

    /// `ledger.lmdb` → `ledger.sessions.lmdb`.
    static func path(beside store: String) -> String {
        (store.hasSuffix(".lmdb") ? String(store.dropLast(5)) : store) + ".sessions.lmdb"
    }

    /// Opens (or creates) the file at `path`; `now` dates the replay responses an older build
    /// stored without a time, so they too expire one retention from now.
    /// - parameter store: the store the server serves, whose owner the file belongs to.
    init(path: String, store: String? = nil, responseRetention: Int64 = SessionStore.defaultResponseRetention, now: Timestamp) throws {
        var options = Environment.Options()
        options.mapSize = 16 << 20
        let made = try Self.prepareFile(path, store: store)
        do {
            environment = try Environment(path: path, options: options)
        } catch {
            if made { unlink(path) }  // its own empty file: a refused start leaves nothing behind
            // Not the store's damage: the sessions file is no LMDB file at all.
            guard let e = error as? LMDBError, e.code == MDB_INVALID else { throw error }
            throw LedgerError(.invalidInput, "\(path) is not the server's sessions file (it is not an LMDB file): move it away; "
                + "the server makes a new one", details: ["field": "db"])
        }
        try Self.requireOpenedOwn(environment, path, store: store)
        try Self.requireNoLog(environment, path)
        self.responseRetention = responseRetention
        // The file the environment opened (a link there resolved).
        let fd = open(environment.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw LedgerError(.storage, "cannot open \(path): \(String(cString: strerror(errno)))") }
        running = RangeLock(fd: fd)
        try dateUntimedResponses(now: now)
    }

    deinit { close(running.fd) }

    private static let sessions = "sessions"   // secret hash (hex) → session JSON
    private static let devices = "devices"     // device id → last connected (ISO-8601)

    /// Records a new session under the hash of its secret, and drops the sessions that have
    /// expired (no request can use one again), so the table holds only live and signed-out
    /// sessions of the last lifetime, not every sign-in ever made.
    func add(_ session: Session, secretHash: Digest) throws {
        try environment.write { txn in
            let db = try txn.openDatabase(Self.sessions)!
            var expired: [[UInt8]] = []
            try txn.scan(db) { k, v in
                if let s = try? Session(json: try JSONParser.parse(Array(v))), s.expiresAt <= session.createdAt { expired.append(Array(k)) }
                return true
            }
            for k in expired { _ = try txn.delete(db, key: k) }
            try txn.put(db, key: Array(secretHash.hex.utf8), value: Array(session.json.serialized().utf8))
        }
    }

    func session(secretHash: Digest) throws -> Session? {
        try environment.read { txn in
            guard let db = try txn.openDatabase(Self.sessions, create: false),
                  let bytes = try txn.get(db, key: Array(secretHash.hex.utf8)) else { return nil }
            return try Session(json: try JSONParser.parse(bytes))
        }
    }

    /// The session `id` (a scan: the table holds one record per signed-in device session).
    func session(id: String) throws -> Session? {
        try environment.read { txn in
            guard let db = try txn.openDatabase(Self.sessions, create: false) else { return nil }
            var found: Session?
            try txn.scan(db) { _, v in
                let s = try Session(json: try JSONParser.parse(Array(v)))
                if s.id == id { found = s }
                return found == nil
            }
            return found
        }
    }

    /// Ends every live session of `device`; returns how many.
    @discardableResult
    func revoke(device: String, at now: Timestamp) throws -> Int {
        try revoke(at: now) { $0.device == device }
    }

    /// Ends every live session of `person`'s devices but `keep` ("sign out everywhere else").
    /// Ends every other session of `person`; returns how many of them still worked (`live`:
    /// not expired, its device live and holding the key that signed it in). Ones a rotation
    /// or revocation had already ended are marked too, but not counted as signed out now.
    func revokeOthers(person: String, keep sessionId: String?, at now: Timestamp, live: (Session) throws -> Bool) throws -> Int {
        var ended = 0
        _ = try revoke(at: now) { s in
            guard s.person == person && s.id != sessionId else { return false }
            if now < s.expiresAt, (try? live(s)) == true { ended += 1 }
            return true
        }
        return ended
    }

    private func revoke(at now: Timestamp, _ matching: (Session) -> Bool) throws -> Int {
        try environment.write { txn in
            let db = try txn.openDatabase(Self.sessions)!
            var changed: [([UInt8], Session)] = []
            try txn.scan(db) { k, v in
                var s = try Session(json: try JSONParser.parse(Array(v)))
                if s.revokedAt == nil, matching(s) {
                    s.revokedAt = now
                    changed.append((Array(k), s))
                }
                return true
            }
            for (k, s) in changed { try txn.put(db, key: k, value: Array(s.json.serialized().utf8)) }
            return changed.count
        }
    }

    func markConnected(device: String, at now: Timestamp) throws {
        try environment.write { txn in
            try txn.put(try txn.openDatabase(Self.devices)!, key: Array(device.utf8), value: Array(now.iso8601.utf8))
        }
    }

    func lastConnected(device: String) throws -> Timestamp? {
        try environment.read { txn in
            guard let db = try txn.openDatabase(Self.devices, create: false),
                  let bytes = try txn.get(db, key: Array(device.utf8)) else { return nil }
            return Timestamp(iso8601: String(decoding: bytes, as: UTF8.self))
        }
    }
}
