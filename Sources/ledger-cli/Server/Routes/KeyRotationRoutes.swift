import ActionLedger
import Foundation
import Hummingbird

/// Key rotation from a device (Specs/statements.md §3.1), what `ledger devices rotate-key`
/// does for the operator: the caller's device — the device itself with the key it is
/// leaving, or another keyed device of the same person — signs the rotation statement, and
/// the engine checks that signature before it records `device.key_rotated`. The server only
/// relays: the statement route tells the signer what to sign (once every rule but the
/// signature holds), and the rotation route hands the signature to the engine. Sessions made under the old key end with the rotation.
extension LedgerServer {
    /// What a rotation request names: the device, its new key (trust not yet set) and the
    /// caller's device that signs for it.
    private struct RotationRequest {
        var device: String
        var key: DeviceKey
        var signer: String
        /// The device as it stood when the request was read (its key in force is the one the
        /// statement names as previous).
        var state: DeviceState
    }

    func addKeyRotationRoutes(_ router: Router<APIContext>) {
        router.post("/v1/devices/:id/rotation-statement") { request, context in
            let who = try context.require(.device)
            let f = try Fields(try await LedgerServer.body(request, context), allowed: ["public_key", "key_protection"])
            let r = try self.rotationRequest(who, target: try context.pathId("id"), f)
            // Checked as the engine will judge it, but for the signature: a phone is never asked
            // to sign a rotation bound to be refused.
            let statement = try self.ledger.checkedRotationStatement(device: r.device, key: r.key, signedBy: r.signer)
            let previous = r.state.key
            // Every line the statement holds, so the signer can rebuild it before signing.
            return LedgerServer.json(["device": .string(r.device), "signed_by": .string(r.signer),
                                      "org": .string(r.state.org), "person": .string(r.state.person),
                                      "platform": .string(r.state.platform.rawValue),
                                      "key_fingerprint": .string(r.key.fingerprint.hex),
                                      "key_protection": .string(r.key.protection.rawValue),
                                      "previous_key_fingerprint": previous.map { .string($0.fingerprint.hex) } ?? .null,
                                      "statement_hex": .string(Hex.encode(statement))])
        }
        router.post("/v1/devices/:id/rotate-key") { request, context in
            let who = try context.require(.device)
            let f = try Fields(try await LedgerServer.body(request, context), allowed: ["public_key", "key_protection", "signature"])
            var r = try self.rotationRequest(who, target: try context.pathId("id"), f)
            let signature = try f.require("signature", f.string)
            guard let raw = Data(base64Encoded: signature), let sig = P256Signature.normalize(Array(raw)) else {
                throw Problem.invalid("signature: expected base64 of an ECDSA P-256 signature", field: "signature")
            }
            // The engine checks the signature against the signer's key in force, under the
            // write lock, and the rest of §3.1 (revoked, unkeyed, key.one_device, cli + UV).
            r.key.trust = .introducedBy(device: r.signer, signature: sig)
            let commandId = try LedgerServer.idempotencyKey(request) ?? CommandRequest.newCommandId()
            let command = Command.rotateDeviceKey(device: r.device, key: r.key)
            return try await self.run(as: who, CommandRequest(command, commandId: commandId, now: try self.now(), actor: who.person!))
        }
    }

    /// Reads and scopes a rotation request: `target` must be a device of the caller's own
    /// person (another org's is unknown, another person's `device_not_owned`, as for a
    /// revocation); the key protection defaults to the current key's, as the CLI's does.
    private func rotationRequest(_ who: Identity, target: String, _ f: Fields) throws -> RotationRequest {
        guard let t = try ledger.read({ try $0.deviceState(target) }), t.org == who.org else {
            throw LedgerError(.unknownDevice, "no device \(target)", details: ["device": .string(target)])
        }
        guard t.person == who.person else {
            throw LedgerError(.deviceNotOwned, "device \(target) belongs to another person", details: ["device": .string(target)])
        }
        var protection = t.key?.protection ?? .device
        if let text = try f.string("key_protection") {
            guard let p = KeyProtection(rawValue: text) else {
                throw Problem.invalid("key_protection: expected none, device or user-verification", field: "key_protection")
            }
            protection = p
        }
        let key = try DeviceKey(spki: try Self.publicKey(f), protection: protection, trust: .firstUse)
        return RotationRequest(device: target, key: key, signer: who.device!, state: t)
    }

    /// `public_key`: PEM, or base64 of the SPKI DER (uncompressed or compressed point).
    static func publicKey(_ f: Fields) throws -> [UInt8] {
        let text = try f.require("public_key", f.string)
        guard let bytes = text.hasPrefix("-----BEGIN") ? Array(text.utf8) : Data(base64Encoded: text).map(Array.init) else {
            throw Problem.invalid("public_key: expected PEM, or base64 of the SPKI DER", field: "public_key")
        }
        return try DeviceKey.readPublicKey(bytes)
    }
}
