import ActionLedger
import Crypto
import Foundation
import Hummingbird

/// Device sessions: a keyed device proves it holds its key by signing a server challenge,
/// and gets a session token (`als_…`) without any secret being copied to it. The same
/// signed challenge authorises revoking one of the person's devices and signing out her
/// other sessions, so a stolen session alone cannot lock its owner out.
extension LedgerServer {
    /// What a signed challenge authorises.
    enum Purpose: Equatable {
        case session
        case revoke(String)
        case signOutOthers

        var text: String {
            switch self {
            case .session: "session"
            case .revoke(let d): RevocationProof.purpose(revoking: d)
            case .signOutOthers: "sign_out_others"
            }
        }
    }

    static let challengeLifetime: Int64 = 120_000
    /// A key no device holds: a sign-in for a device without a key (or an unknown one)
    /// verifies against it, so it costs what a keyed device's does.
    static let decoyKey = try! DeviceKey(spki: Array(P256.Signing.PrivateKey().publicKey.derRepresentation),
                                         protection: .none, trust: .firstUse)  // a fresh key's own encoding: always valid

    func addSessionRoutes(_ router: Router<APIContext>) {
        router.post("/v1/sessions/challenge") { request, context in
            let f = try Fields(try await LedgerServer.body(request, context), allowed: ["device", "purpose", "target"])
            let device = try f.identifier("device")
            let purpose: Purpose
            // Absent is a sign-in; null is no purpose at all (openapi: one of the three).
            if f.isNull("purpose") { throw Problem.invalid("purpose: expected session, revoke or sign_out_others", field: "purpose") }
            switch try f.string("purpose") ?? "session" {
            case "session": purpose = .session
            case "revoke": purpose = .revoke(try f.identifier("target"))
            case "sign_out_others": purpose = .signOutOthers
            default: throw Problem.invalid("purpose: expected session, revoke or sign_out_others", field: "purpose")
            }
            // Issued for any device id, linked or not, and nothing is kept (Challenges): the caller
            // has proven nothing yet, so the answer must not tell which devices exist, have a key
            // or were revoked, and nothing it sends can displace another device's challenge.
            let storeId = try self.ledger.read { try $0.storeId() }
            let expires = try self.now().adding(milliseconds: Self.challengeLifetime)
            let (id, nonce) = self.challenges.issue(device: device, purpose: purpose.text, expiresAt: expires)
            let statement = Statement.session(storeId: storeId ?? .zero, device: device, purpose: purpose.text, challenge: nonce)
            return LedgerServer.json(["challenge_id": .string(id), "statement_hex": .string(Hex.encode(statement)),
                                      "expires_at": .string(expires.iso8601)], status: .created)
        }
        router.post("/v1/sessions") { request, context in
            let f = try Fields(try await LedgerServer.body(request, context), allowed: ["challenge_id", "signature"])
            let (device, state, _) = try self.verifyChallenge(f, purpose: .session)
            let now = try self.now()
            let sessionId = "ses-" + LedgerServer.randomHex(8)
            let secret = "als_\(sessionId)_" + LedgerServer.randomHex(32)
            let session = SessionStore.Session(id: sessionId, device: device, person: state.person, org: state.org, createdAt: now,
                                               expiresAt: now.adding(milliseconds: self.configuration.sessionLifetime),
                                               keyFingerprint: state.key?.fingerprint, keySeq: state.keySeq)
            let sessions = self.sessions
            try await Blocking.run { try sessions.add(session, secretHash: Ledger.tokenHash(secret)) }
            guard case .object(var o) = session.json else { throw Problem(.internalServerError, "internal_error", "session") }
            o["token"] = .string(secret)
            return LedgerServer.json(.object(o), status: .created)
        }
        router.post("/v1/sessions/sign-out-others") { request, context in
            let who = try context.require(.device)
            let f = try Fields(try await LedgerServer.body(request, context), allowed: ["challenge_id", "signature"])
            let (device, _, _) = try self.verifyChallenge(f, purpose: .signOutOthers)
            guard device == who.device else { throw Problem.forbidden("the challenge was signed by another device than the caller") }
            let sessions = self.sessions, now = try self.now(), person = who.person!, keep = who.id, ledger = self.ledger
            let ended = try await Blocking.run {
                try sessions.revokeOthers(person: person, keep: keep, at: now) { s in
                    try ledger.read { try $0.deviceState(s.device) }.map { $0.revokedAt == nil && s.isBound(to: $0) } ?? false
                }
            }
            self.hub.close { $0.person == person && $0.id != keep && $0.id.hasPrefix("ses-") }
            return LedgerServer.json(["sessions_ended": .number(Double(ended))])
        }
        router.post("/v1/devices/:id/revoke") { request, context in
            let who = try context.require(.device)
            let target = try context.pathId("id")
            let f = try Fields(try await LedgerServer.body(request, context), allowed: ["challenge_id", "signature", "reason"])
            // The challenge is single use: a replay of this device's revocation is answered
            // first, one request per key at a time.
            let key = try LedgerServer.idempotencyKey(request)
            if let key { await self.commandGate.enter(key) }
            defer { if let key { self.commandGate.leave(key) } }
            let revoker = who.device
            let isOwn: @Sendable (Event) -> Bool = { e in
                if case .deviceRevoked(let d) = e.payload { return d.device == target && e.device == revoker }
                return false
            }
            if let replay = try await self.keptReplay(request, isOwn: isOwn) { return replay }
            if let own = try await self.ownCommand(key, isOwn: isOwn), case .deviceRevoked(let d) = own.payload {
                // Its kept response expired: the engine answers the same revocation as a replay.
                let revocation = Command.revokeDevice(device: d.device, reason: d.reason, by: own.device, proof: d.proof)
                return try await self.run(as: who, CommandRequest(revocation, commandId: key!, now: try self.now(), actor: own.actor), gated: true)
            }
            let (signer, state, proof) = try self.verifyChallenge(f, purpose: .revoke(target))
            guard signer == who.device else { throw Problem.forbidden("the challenge was signed by another device than the caller") }
            guard state.key?.protection == .userVerification else {
                throw LedgerError(.userVerificationRequired, "revoking a device needs a user-verified key (biometrics) on \(signer)",
                                  details: ["device": .string(signer)])
            }
            guard let t = try self.ledger.read({ try $0.deviceState(target) }), t.org == who.org else {
                throw LedgerError(.unknownDevice, "no device \(target)", details: ["device": .string(target)])
            }
            guard t.person == who.person else {
                throw LedgerError(.deviceNotOwned, "device \(target) belongs to another person", details: ["device": .string(target)])
            }
            let commandId = key ?? CommandRequest.newCommandId()
            // Recorded as made from the device whose user-verified key signed the challenge, with
            // that signature: the engine checks it again, and an auditor can from the log.
            let command = Command.revokeDevice(device: target, reason: try f.string("reason") ?? "", by: signer, proof: proof)
            let response = try await self.run(as: who, CommandRequest(command, commandId: commandId, now: try self.now(), actor: who.person!),
                                              gated: key != nil)
            let sessions = self.sessions, now = try self.now()
            try await Blocking.run { _ = try sessions.revoke(device: target, at: now) }
            return response
        }
    }

    static func liveKey(_ device: String, _ state: DeviceState?) throws -> DeviceKey {
        guard let state else { throw LedgerError(.unknownDevice, "no device \(device)", details: ["device": .string(device)]) }
        try state.requireLive()
        guard let key = state.key else {
            throw LedgerError(.badProof, "device \(device) has no key to sign with: it needs an operator token",
                              details: ["problem": "key", "device": .string(device)])
        }
        return key
    }

    /// Takes the challenge out (single use) and checks its signature by the device's key:
    /// the device, its state, and the signature as a revocation records it.
    func verifyChallenge(_ f: Fields, purpose: Purpose) throws -> (String, DeviceState, RevocationProof) {
        let id = try f.require("challenge_id", f.string)
        let signature = try f.require("signature", f.string)
        let now = try now()
        // One answer, and the same work, for every failure: a malformed, forged or expired id, a
        // device without a key, another purpose, a wrong signature, a used challenge. Only the
        // holder of a device's key learns anything about it (that it was revoked).
        let refused = Problem.unauthorized("the challenge is unknown, used or expired, or was not signed by its device's key")
        let raw = Data(base64Encoded: signature).flatMap { P256Signature.normalize(Array($0)) } ?? []
        let parsed = Challenges.parse(id)
        let device = parsed?.device ?? id
        let state = try ledger.read { try $0.deviceState(device) }
        let nonce = challenges.nonce(device: device, purpose: purpose.text, expiresAt: parsed?.expiresAt ?? now,
                                     draw: parsed?.draw ?? "")
        let statement = Statement.session(storeId: try ledger.read { try $0.storeId() } ?? .zero, device: device,
                                          purpose: purpose.text, challenge: nonce)
        let verified = (state?.key ?? Self.decoyKey).verifies(raw, over: statement) && state?.key != nil
        guard let parsed, let state, verified, now < parsed.expiresAt,
              challenges.spend(id, expiresAt: parsed.expiresAt, now: now) else { throw refused }
        let key = try Self.liveKey(parsed.device, state)  // revoked: device_revoked
        return (parsed.device, state, RevocationProof(keyFingerprint: key.fingerprint, challenge: nonce, signature: raw))
    }
}
