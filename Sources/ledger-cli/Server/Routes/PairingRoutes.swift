import ActionLedger
import Foundation
import Hummingbird

/// Enrolment from the phone: a keyed device of the person opens a short-lived pairing code,
/// the new device posts its public key with the code, and the pairing device vouches for
/// that key by signing the link statement (Specs/statements.md §1.1): the link is
/// `device.linked` introduced by it, exactly as `ledger devices link --introduced-by`.
extension LedgerServer {
    struct Pairing: Sendable {
        var introducer: String
        var person: String
        var org: String
        var expiresAt: Timestamp
        /// Set once the new device has posted its key.
        var device: String?
        var label = ""
        var platform = Platform.ios
        var key: DeviceKey?

        /// The link statement the pairing device signs, once the new device has posted its key.
        func statement(storeId: ActionLedger.Digest) -> [UInt8]? {
            guard let device, let key else { return nil }
            return Statement.link(storeId: storeId, org: org, person: person, device: device, platform: platform, key: key,
                                  introducedBy: introducer)
        }
    }

    static let pairingLifetime: Int64 = 300_000

    func addPairingRoutes(_ router: Router<APIContext>) {
        router.post("/v1/devices/pairing") { _, context in
            let who = try context.require(.device)
            let state = try self.ledger.read { try $0.deviceState(who.device!) }
            _ = try Self.liveKey(who.device!, state)  // only a keyed device can vouch for another
            let expires = try self.now().adding(milliseconds: Self.pairingLifetime)
            let code = self.pairings.withLock { p in
                p = p.filter { $0.value.expiresAt > expires.adding(milliseconds: -Self.pairingLifetime) }
                // Eight digits, read aloud or typed on the new device; the id is the secret
                // half. Drawn again while in use: a collision must not replace another
                // person's open pairing.
                var code: String
                repeat { code = String(UInt64.random(in: 10_000_000...99_999_999)) } while p[code] != nil
                p[code] = Pairing(introducer: who.device!, person: who.person!, org: who.org, expiresAt: expires)
                return code
            }
            return LedgerServer.json(["code": .string(code), "expires_at": .string(expires.iso8601)], status: .created)
        }
        router.post("/v1/devices") { request, context in
            let f = try Fields(try await LedgerServer.body(request, context),
                               allowed: ["code", "device", "label", "platform", "public_key", "key_protection"])
            let code = try f.require("code", f.string)
            // A caller with a live token spends from its token's bucket, which the middleware
            // left the address's alone: every redemption is charged to the address too, before
            // the code is judged (charged only on a refusal, a 429 would tell a wrong code from
            // a right one, and every guess would still be judged at the token's rate). However
            // many tokens or sessions one holds, codes are tried no faster than the address
            // limit lets anyone try them; a pairing costs one call of it.
            if context.identity != nil {
                try self.addressLimit.charge(request, context, refusal: "too many pairing-code redemptions from this address")
            }
            // The code is judged first: without a live one, nothing else about the request matters.
            let open = try self.now()
            guard self.pairings.withLock({ p in p[code].map { open < $0.expiresAt && $0.device == nil } ?? false }) else {
                throw Problem.unauthorized("the pairing code is unknown, used or expired")
            }
            let device = try f.identifier("device")
            guard let platform = Platform(rawValue: try f.require("platform", f.string)) else {
                throw Problem.invalid("platform: expected ios, web or cli", field: "platform")
            }
            guard let protection = KeyProtection(rawValue: try f.string("key_protection") ?? "device") else {
                throw Problem.invalid("key_protection: expected none, device or user-verification", field: "key_protection")
            }
            // Refused here, as the link itself would refuse it, before the code is spent on it.
            if platform == .cli && protection == .userVerification {
                throw Problem.invalid("a cli device cannot declare user-verification: a key file enforces no biometrics",
                                      field: "key_protection")
            }
            let key = try DeviceKey(spki: try Self.publicKey(f), protection: protection, trust: .firstUse)
            // One key names one device (statements.md `key.one_device`): refused before the code is spent.
            if try self.ledger.read({ try $0.keysEverHeld() })[key.fingerprint] != nil {
                throw Problem.invalid("public_key: that key is, or was, another device's: one key names one device", field: "public_key")
            }
            let now = try self.now()
            let label = try f.string("label") ?? device
            let pairing: Pairing? = self.pairings.withLock { p in
                guard var pending = p[code], now < pending.expiresAt, pending.device == nil else { return nil }
                (pending.device, pending.label, pending.platform, pending.key) = (device, label, platform, key)
                p[code] = pending
                return pending
            }
            guard let pairing, let statement = pairing.statement(storeId: try self.ledger.read { try $0.storeId() } ?? .zero) else {
                throw Problem.unauthorized("the pairing code is unknown, used or expired")
            }
            return LedgerServer.json(["code": .string(code), "introducer": .string(pairing.introducer),
                                      "statement_hex": .string(Hex.encode(statement)), "expires_at": .string(pairing.expiresAt.iso8601)],
                                     status: .accepted)
        }
        // The pairing device's view of its code: what the new device posted, and the link
        // statement it is asked to sign, so the person sees what she vouches for (which device,
        // platform and key) before her key signs. A code that is not this device's is unknown.
        router.getAndHead("/v1/devices/pairing/:code") { _, context in
            let who = try context.require(.device)
            let code = try context.parameters.require("code")
            let now = try self.now()
            guard let pairing = self.pairings.withLock({ p in p[code].flatMap { now < $0.expiresAt && $0.introducer == who.device ? $0 : nil } }) else {
                throw LedgerError(.unknownDevice, "no open pairing \(code) of this device", details: ["field": "code"])
            }
            var o: JSONObject = ["code": .string(code), "introducer": .string(pairing.introducer), "expires_at": .string(pairing.expiresAt.iso8601),
                                 "device": .null, "label": .null, "platform": .null, "key_fingerprint": .null, "key_protection": .null,
                                 "statement_hex": .null]
            if let device = pairing.device, let key = pairing.key,
               let statement = pairing.statement(storeId: try self.ledger.read { try $0.storeId() } ?? .zero) {
                o["device"] = .string(device)
                o["label"] = .string(pairing.label)
                o["platform"] = .string(pairing.platform.rawValue)
                o["key_fingerprint"] = .string(key.fingerprint.hex)
                o["key_protection"] = .string(key.protection.rawValue)
                o["statement_hex"] = .string(Hex.encode(statement))
            }
            return LedgerServer.json(.object(o))
        }
        router.post("/v1/devices/pairing/:code/approve") { request, context in
            let who = try context.require(.device)
            let code = try context.parameters.require("code")
            let f = try Fields(try await LedgerServer.body(request, context), allowed: ["signature"])
            // The code is single use: a replay of this introducer's approval of this pairing is
            // answered first, one request per key at a time.
            let idempotency = try LedgerServer.idempotencyKey(request)
            if let idempotency { await self.commandGate.enter(idempotency) }
            defer { if let idempotency { self.commandGate.leave(idempotency) } }
            let introducer = who.device!
            let pending = self.pairings.withLock { $0[code]?.device }
            let isOwn: @Sendable (Event) -> Bool = { e in
                guard case .deviceLinked(let d) = e.payload, d.key?.introducer == introducer else { return false }
                return pending.map { $0 == d.device } ?? true  // a pairing still open for another device is not it
            }
            if let replay = try await self.keptReplay(request, isOwn: isOwn) { return replay }
            let now = try self.now()
            if let own = try await self.ownCommand(idempotency, isOwn: isOwn), case .deviceLinked(let d) = own.payload, let key = d.key {
                // Its kept response expired: the engine answers the same link as a replay.
                let link = Command.linkKeyedDevice(device: d.device, person: own.person, org: own.org, label: d.label, platform: d.platform, key: key)
                return try await self.run(as: who, CommandRequest(link, commandId: idempotency!, now: now, actor: own.actor), status: .created, gated: true)
            }
            guard self.pairings.withLock({ p in p[code].map { now < $0.expiresAt && $0.device != nil && $0.introducer == who.device } ?? false }) else {
                throw Problem.unauthorized("no pairing \(code) waits for this device's approval")
            }
            let signature = try f.require("signature", f.string)
            guard let raw = Data(base64Encoded: signature), let sig = P256Signature.normalize(Array(raw)) else {
                throw Problem.invalid("signature: expected base64 of an ECDSA P-256 signature", field: "signature")
            }
            let pairing = self.pairings.withLock { p -> Pairing? in
                guard let pending = p[code], now < pending.expiresAt, pending.device != nil, pending.introducer == who.device else { return nil }
                p[code] = nil  // single use, whatever the engine says next
                return pending
            }
            guard let pairing, let device = pairing.device, var key = pairing.key else {
                throw Problem.unauthorized("no pairing \(code) waits for this device's approval")
            }
            // The engine checks the introduction's signature against the introducer's key.
            key.trust = .introducedBy(device: pairing.introducer, signature: sig)
            let command = Command.linkKeyedDevice(device: device, person: pairing.person, org: pairing.org, label: pairing.label,
                                                  platform: pairing.platform, key: key)
            let commandId = idempotency ?? CommandRequest.newCommandId()
            return try await self.run(as: who, CommandRequest(command, commandId: commandId, now: now, actor: pairing.person), status: .created,
                                      gated: idempotency != nil)
        }
    }
}
