/// Checks the device proof of a tap, dismissal, edit or hold (Specs/statements.md) before
/// the policy judges it: a keyed device must sign, and the signature must be its key's over
/// the statement the engine rebuilds from the command, the action and the store.
enum ProofGate {
    /// How far a device's claimed time may lie behind the engine clock (offline queues).
    static let maxAge: Int64 = 24 * 3_600_000
    /// How far it may lie ahead (clock skew).
    static let maxAhead: Int64 = 5 * 60_000

    /// A proof verified outside the write lock: the statement and key it verified against.
    struct Verified: Sendable, Equatable {
        var statement: [UInt8]
        /// What the statement was built from besides the request itself.
        var storeId: Digest
        var actionId: String
        var org: String
        var contentHash: Digest
        var fingerprint: Digest
        /// The level it proved (a webauthn proof's from its UV flag).
        var level: ProofLevel
        /// The relying party it was checked against (webauthn).
        var rp: RelyingParty?
    }

    /// The proof to record, nil for an unkeyed device's unsigned command. Device checks the
    /// policy makes first (unknown, revoked, another org's, another person's) are left to
    /// it: then nothing is verified here and the policy's refusal stands.
    /// `lastSignCount` gives a WebAuthn key's last accepted non-zero counter (SignCount).
    /// - throws: `proof_required`, `bad_proof`.
    static func check(_ request: CommandRequest, action s: ActionState, device: DeviceState?, storeId: Digest?,
                      rp: RelyingParty?, now: Timestamp, lastSignCount: (Digest) throws -> UInt32?) throws -> SignedProof? {
        guard let device, !device.isRevoked, device.org == s.org, device.person == s.person else { return nil }
        guard let key = device.key else {
            if request.proof != nil {
                throw bad("device \(device.device) has no key: it cannot sign", problem: "key", device.device)
            }
            return nil
        }
        guard let proof = request.proof else {
            throw LedgerError(.proofRequired, "device \(device.device) is keyed: its taps must be signed (--key or --proof)",
                              details: ["device": .string(device.device)])
        }
        let age = now.milliseconds(since: proof.claimedAt)
        if age > maxAge {
            throw bad("claimed time \(proof.claimedAt.iso8601) is more than 24 h before the engine's \(now.iso8601)",
                      problem: "claimed_at", device.device)
        }
        if -age > maxAhead {
            throw bad("claimed time \(proof.claimedAt.iso8601) is more than 5 min after the engine's \(now.iso8601)",
                      problem: "claimed_at", device.device)
        }
        guard let storeId, CommandStatement.deviceId(request.command) != nil else { return nil }
        let fingerprint = key.fingerprint
        // Verified outside the lock over this same statement? Its inputs other than the
        // request's own are the store, the action's org (never changes) and the content
        // hash it names: when those match, the statement's bytes match too, and it need not
        // be built again under the lock.
        if let pre = request.preverified, pre.storeId == storeId, pre.actionId == s.actionId, pre.org == s.org,
           pre.contentHash == CommandStatement.content(request.command, proof: proof, action: s),
           pre.fingerprint == fingerprint, pre.rp == rp, proof.webauthn == nil {
            return SignedProof(claimedAt: proof.claimedAt, contentHash: pre.contentHash, keyFingerprint: fingerprint,
                               level: pre.level, signature: proof.signature, webauthn: nil)
        }
        guard let statement = CommandStatement.statement(request.command, commandId: request.commandId,
                                                         claimedAt: proof.claimedAt, content: proof.contentHash,
                                                         action: s, storeId: storeId) else { return nil }
        let bytes = statement.bytes
        if let claimed = proof.statement, claimed != bytes {
            throw bad("statement mismatch: " + difference(claimed, bytes), problem: "statement", device.device)
        }
        let level: ProofLevel
        if let pre = request.preverified, pre.statement == bytes, pre.fingerprint == fingerprint, pre.rp == rp {
            level = pre.level
        } else if proof.webauthn == nil {
            guard key.verifies(proof.signature, over: bytes) else {
                throw bad("the signature does not verify with device \(device.device)'s key (\(fingerprint.hex.prefix(16))…) "
                    + "over the statement for \(statement.step.rawValue) of \(s.actionId) with command id \(request.commandId)",
                    problem: "signature", device.device)
            }
            level = key.protection == .userVerification ? .signedUV : .signed
        } else {
            do {
                level = try key.proofLevel(signature: proof.signature, webauthn: proof.webauthn, statement: bytes, rp: rp,
                                           platform: device.platform)
            } catch let e as LedgerError {
                throw bad(e.message + " (\(statement.step.rawValue) of \(s.actionId), command id \(request.commandId))",
                          problem: e.problem, device.device)
            }
        }
        if let a = proof.webauthn {
            // Judged under the write lock, never pre-verified: the counter moves with each commit.
            do { try SignCount.check(a.signCount, last: try lastSignCount(fingerprint), key: fingerprint) } catch let e as LedgerError {
                throw bad(e.message + " (device \(device.device))", problem: e.problem, device.device)
            }
        }
        return SignedProof(claimedAt: proof.claimedAt, contentHash: statement.contentHash, keyFingerprint: fingerprint,
                           level: level, signature: proof.signature, webauthn: proof.webauthn)
    }

    /// A signed change made on content the action no longer has.
    static func stale(_ s: ActionState, _ signed: Digest) -> LedgerError {
        LedgerError(.staleContent, "action \(s.actionId)'s content is not what the device signed: it signed \(signed.hex.prefix(12)), "
            + "the current content is \(s.contentHash.hex.prefix(12))", details: ["current_content_hash": .string(s.contentHash.hex)])
    }

    static func bad(_ message: String, problem: String, _ device: String) -> LedgerError {
        LedgerError(.badProof, message, details: ["problem": .string(problem), "device": .string(device)])
    }

    /// The first line where what the client signed differs from what the engine expects.
    static func difference(_ claimed: [UInt8], _ expected: [UInt8]) -> String {
        let a = String(decoding: claimed, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let b = String(decoding: expected, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? String(a[i]) : "(none)", y = i < b.count ? String(b[i]) : "(none)"
            if x != y { return "line \(i + 1) signed as \"\(x.prefix(100))\", the engine expects \"\(y.prefix(100))\"" }
        }
        return "the bytes differ"
    }
}

extension Ledger {
    /// Verifies each request's proof against one snapshot, outside the write lock, so the
    /// ECDSA work of concurrent approvers runs in parallel; the writer then re-checks only
    /// that statement and key are still the ones verified (``ProofGate/check``).
    func preverify(_ requests: [CommandRequest]) -> [CommandRequest] {
        guard requests.contains(where: { $0.proof != nil }) else { return requests }
        return (try? read { reader in
            try requests.map { request -> CommandRequest in
                var request = request
                guard let proof = request.proof, let id = request.command.actionId,
                      let s = try reader.actionState(id), let storeId = try reader.storeId(),
                      let deviceId = CommandStatement.deviceId(request.command), let device = try reader.deviceState(deviceId),
                      let key = device.key,
                      let t = CommandStatement.statement(request.command, commandId: request.commandId, claimedAt: proof.claimedAt,
                                                  content: proof.contentHash, action: s, storeId: storeId)
                else { return request }
                let bytes = t.bytes, rp = try reader.relyingParty()
                // A statement other than the one the client says it signed is the writer's to refuse.
                if proof.statement == nil || proof.statement == bytes,
                   let level = try? key.proofLevel(signature: proof.signature, webauthn: proof.webauthn, statement: bytes, rp: rp,
                                                   platform: device.platform) {
                    request.preverified = ProofGate.Verified(statement: bytes, storeId: storeId, actionId: s.actionId, org: s.org,
                                                             contentHash: t.contentHash, fingerprint: key.fingerprint, level: level, rp: rp)
                }
                return request
            }
        }) ?? requests
    }
}
