/// WebAuthn signature counters (Specs/statements.md §2.5). An authenticator that counts
/// raises its counter with every assertion, so a cloned one shows up as a counter that does
/// not rise. The counter is already inside the recorded `authenticator_data` (the chain covers
/// it); the engine keeps each key's last accepted non-zero counter in `meta` to judge the
/// next one, and every offline checker recomputes it from the log in log order.
extension WebAuthnAssertion {
    /// The authenticator's signature counter: authenticatorData bytes 33…36, big-endian
    /// (after rpIdHash and flags); 0 when the data is too short to hold one.
    public var signCount: UInt32 {
        guard authenticatorData.count >= 37 else { return 0 }
        return authenticatorData[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

enum SignCount {
    /// WebAuthn §7.2 step 21: once a key has shown a non-zero counter, every later
    /// assertion must show a greater one. An authenticator that does not count sends 0
    /// every time (§6.1.1), which stays accepted while the key has never shown more; a 0
    /// after a non-zero counter is refused like any counter that does not rise (a key
    /// holder could otherwise send 0 to step around the check).
    /// - throws: `bad_proof`, `problem` `sign_count`.
    static func check(_ count: UInt32, last: UInt32?, key: Digest) throws {
        guard let last, count <= last else { return }
        throw LedgerError(.badProof, "webauthn: the signature counter is \(count), not greater than \(last), the last accepted "
            + "for key \(key.hex.prefix(16))…: a cloned authenticator or a replayed assertion",
            details: ["problem": "sign_count"])
    }

    /// The assertion of a recorded proof: a signed tap's, dismissal's, edit's, hold's, or a
    /// recorded refusal's (an authenticated assertion too: WebAuthn moves the counter on
    /// every verified assertion, whatever the relying party then decides).
    static func assertion(_ payload: Payload) -> (SignedProof, WebAuthnAssertion)? {
        let proof: SignedProof?
        if case .tapRefused(let t) = payload { proof = t.proof } else { proof = payload.proof }
        guard let proof, let a = proof.webauthn else { return nil }
        return (proof, a)
    }
}

/// Each key's last accepted non-zero counter and the seq that recorded it, as an offline
/// checker folds them along the log (memory: one entry per WebAuthn key that counts).
struct SignCounts {
    private(set) var last: [Digest: (count: UInt32, seq: UInt64)] = [:]

    /// Checks `event`'s assertion, if it has one, against the key's last counter, then
    /// records it. - throws: `bad_proof` (`sign_count`).
    mutating func accept(_ event: Event) throws {
        guard let (proof, a) = SignCount.assertion(event.payload) else { return }
        try SignCount.check(a.signCount, last: last[proof.keyFingerprint]?.count, key: proof.keyFingerprint)
        record(proof.keyFingerprint, a.signCount, seq: event.seq)
    }

    /// Records `event`'s counter without judging it (a replay's prefix, the layout backfill).
    mutating func fold(_ event: Event) {
        guard let (proof, a) = SignCount.assertion(event.payload) else { return }
        record(proof.keyFingerprint, a.signCount, seq: event.seq)
    }

    private mutating func record(_ key: Digest, _ count: UInt32, seq: UInt64) {
        if count != 0 { last[key] = (count, seq) }
    }
}

extension MetaKey {
    static let signCountPrefix: [UInt8] = Array("sign_count/".utf8)
    /// `sign_count/FINGERPRINT` (64 hex) → the key's last accepted non-zero counter (4 bytes
    /// BE) and the seq of the event that recorded it (8 bytes BE).
    static func signCount(_ key: Digest) -> [UInt8] { signCountPrefix + Array(key.hex.utf8) }
}

extension LogReader {
    /// The last accepted non-zero signature counter of the WebAuthn key `key`, and its seq.
    /// - throws: `corrupt_event` for a record that is not 12 bytes.
    func signCount(_ key: Digest) throws -> (count: UInt32, seq: UInt64)? {
        try dbs.meta.withValue(txn, key: MetaKey.signCount(key)) { b -> (UInt32, UInt64) in
            guard b.count == 12 else { throw Self.corruptRecord("meta", "sign_count/\(key.hex)", length: b.count, expected: 12) }
            return (UInt32(bigEndian: b.loadUnaligned(as: UInt32.self)), Keys.readU64(b, at: 4))
        }
    }

    static func signCountRecord(_ count: UInt32, seq: UInt64) -> [UInt8] {
        withUnsafeBytes(of: count.bigEndian) { Array($0) } + Keys.u64(seq)
    }
}

extension SignCounts {
    /// Writes every record into `meta` (the layout backfill, Log/MetaLayout).
    func write(_ dbs: LogDatabases, _ txn: Transaction) throws {
        for (key, v) in last { try dbs.meta.put(txn, key: MetaKey.signCount(key), value: LogReader.signCountRecord(v.count, seq: v.seq)) }
    }

    /// `verify --deep`: the `sign_count/` records of `meta` are exactly these, none missing,
    /// none more. - throws: `integrity_failure` naming the record.
    func compare(with reader: LogReader) throws {
        for (key, v) in last {
            let stored = try reader.signCount(key)
            guard let stored, stored == v else {
                throw IndexVerifier.failure(reader.dbs.meta, MetaKey.signCount(key), v.seq, stored == nil ? "index_missing" : "index_mismatch",
                                         "does not hold counter \(v.count) of seq \(v.seq)")
            }
        }
        try reader.dbs.meta.scan(reader.txn, from: MetaKey.signCountPrefix) { k, _ in
            guard k.starts(with: MetaKey.signCountPrefix) else { return false }
            let hex = String(decoding: k[MetaKey.signCountPrefix.count...], as: UTF8.self)
            guard let key = Digest(hex: hex), last[key] != nil else {
                throw IndexVerifier.failure(reader.dbs.meta, Array(k), nil, "index_mismatch", "names a key no webauthn proof implies")
            }
            return true
        }
    }
}

extension AppendSession {
    /// Keeps `sign_count/KEY` current: called for every appended event.
    func indexSignCount(_ event: Event) throws {
        guard let (proof, a) = SignCount.assertion(event.payload), a.signCount != 0 else { return }
        try dbs.meta.put(txn, key: MetaKey.signCount(proof.keyFingerprint), value: LogReader.signCountRecord(a.signCount, seq: event.seq))
    }
}
