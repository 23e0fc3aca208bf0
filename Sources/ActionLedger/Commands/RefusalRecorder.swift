/// Authenticated refusals (Specs/policy.md §7, Specs/statements.md §2.3): a tap,
/// dismissal, edit or hold refused although its device's signature verifies is recorded as
/// `tap.refused`, so an auditor sees a revoked phone's valid attempt or a signed approval
/// the policy turned down. Unauthenticated refusals (no proof, a bad one, malformed input)
/// write nothing, and a device's recorded refusals are rate-limited.
enum RefusalRecorder {
    /// The refusals a verified proof gets recorded with: the policy's, after the proof
    /// gate. Malformed input and the gate's own refusals are never recorded.
    static let recorded: Set<LedgerError.Code> = [.deviceRevoked, .alreadyDecided, .actionExpired, .tapsRequired,
                                                  .proofRequired, .userVerificationRequired, .staleContent]
    /// At most this many `tap.refused` per device per minute of engine time (the UTC minute
    /// of `at`); beyond it a refusal writes nothing, so a stolen key cannot flood the log.
    static let perMinute: UInt32 = 10

    /// The `tap.refused` to append for `error`, or nil when the refusal writes nothing.
    static func refusal(for request: CommandRequest, _ error: LedgerError, reader: LogReader,
                        now: Timestamp) throws -> TapRefusal? {
        guard recorded.contains(error.code), let proof = request.proof, let id = request.command.actionId,
              let deviceId = CommandStatement.deviceId(request.command), let s = try reader.actionState(id),
              let device = try reader.deviceState(deviceId), let key = device.key,
              device.person == s.person, device.org == s.org, let storeId = try reader.storeId() else { return nil }
        let age = now.milliseconds(since: proof.claimedAt)
        guard age <= ProofGate.maxAge, -age <= ProofGate.maxAhead,
              let t = CommandStatement.statement(request.command, commandId: request.commandId, claimedAt: proof.claimedAt,
                                                 content: proof.contentHash, action: s, storeId: storeId) else { return nil }
        let bytes = t.bytes
        if let claimed = proof.statement, claimed != bytes { return nil }
        let rp = try reader.relyingParty()
        let level: ProofLevel
        if let pre = request.preverified, pre.statement == bytes, pre.fingerprint == key.fingerprint, pre.rp == rp {
            level = pre.level
        } else {
            guard let l = try? key.proofLevel(signature: proof.signature, webauthn: proof.webauthn, statement: bytes, rp: rp,
                                              platform: device.platform) else { return nil }
            level = l
        }
        // A counter that does not rise is no authenticated attempt: it writes nothing (SignCount).
        if let a = proof.webauthn, (try? SignCount.check(a.signCount, last: try reader.signCount(key.fingerprint)?.count,
                                                         key: key.fingerprint)) == nil { return nil }
        if let (minute, count) = try reader.refusals(device: deviceId), minute == now.minute, count >= perMinute { return nil }
        return TapRefusal(step: t.step, code: error.code.rawValue, statement: bytes,
                          proof: SignedProof(claimedAt: proof.claimedAt, contentHash: t.contentHash, keyFingerprint: key.fingerprint,
                                             level: level, signature: proof.signature, webauthn: proof.webauthn))
    }
}

extension Timestamp {
    /// Minutes since the epoch: the rate limit's window for recorded refusals.
    var minute: Int64 { milliseconds >= 0 ? milliseconds / 60_000 : (milliseconds - 59_999) / 60_000 }
}

extension MetaKey {
    /// `refusals/DEVICE` → the minute (8 bytes BE) of the device's latest `tap.refused` and
    /// how many it has in that minute (4 bytes BE).
    static func refusals(_ device: String) -> [UInt8] { Array(("refusals/" + device).utf8) }
}

extension LogReader {
    /// The minute of `device`'s latest recorded refusal and its count in that minute.
    func refusals(device: String) throws -> (minute: Int64, count: UInt32)? {
        try dbs.meta.withValue(txn, key: MetaKey.refusals(device)) { b -> (Int64, UInt32)? in
            guard b.count == 12 else { throw Self.corruptRecord("meta", "refusals/\(device)", length: b.count, expected: 12) }
            return (Int64(bitPattern: Keys.readU64(b)), UInt32(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        } ?? nil
    }

    static func refusalRecord(minute: Int64, count: UInt32) -> [UInt8] {
        var v = Keys.u64(UInt64(bitPattern: minute))
        withUnsafeBytes(of: count.bigEndian) { v.append(contentsOf: $0) }
        return v
    }
}
