import Crypto
import Foundation
import Testing
@testable import ActionLedger

/// Specs/vectors/statements.json (made from Specs/statements.md by an independent Python
/// script) is exactly what the engine builds and signs.
@Suite struct StatementVectorTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Specs/vectors/statements.json")

    func string(_ j: JSON?) -> String { if case .string(let s)? = j { s } else { "" } }

    @Test func theEngineBuildsAndVerifiesEveryVector() throws {
        let doc = try JSONParser.parse(Array(try Data(contentsOf: Self.file)))
        let spki = Hex.decode(string(doc["test_key"]?["public_key_spki_hex"]))!
        let key = try DeviceKey(spki: spki, protection: .device, trust: .firstUse)
        #expect(key.fingerprint.hex == string(doc["test_key"]?["fingerprint"]))
        // The published scalar is the published key.
        let scalar = Hex.decode(string(doc["test_key"]?["private_scalar_hex"]))!
        #expect(Array(try P256.Signing.PrivateKey(rawRepresentation: scalar).publicKey.derRepresentation) == spki)
        guard case .array(let taps)? = doc["tap"], case .array(let links)? = doc["link"],
              case .array(let rotations)? = doc["rotation"] else { Issue.record("shape"); return }
        #expect(taps.count == 7 && links.count == 1 && rotations.count == 1)
        for v in taps {
            let i = v["inputs"]!
            let t = Statement.Tap(storeId: Digest(hex: string(i["store"]))!, org: string(i["org"]), actionId: string(i["action"]),
                                  step: Statement.Step(rawValue: string(i["step"]))!, contentHash: Digest(hex: string(i["content"]))!,
                                  device: string(i["device"]), commandId: string(i["command"]),
                                  claimedAt: Timestamp(iso8601: string(i["claimed_at"]))!,
                                  until: i["until"].map { Timestamp(iso8601: string($0))! }, text: i["text"].map { string($0) },
                                  reason: i["reason"].map { string($0) })
            check(t.bytes, v, key)
            #expect(WebAuthnAssertion.challenge(for: t.bytes) == string(v["webauthn_challenge"]))
        }
        let r = rotations[0]["inputs"]!
        let newKey = try DeviceKey(spki: spki, protection: KeyProtection(rawValue: string(r["key_protection"]))!, trust: .firstUse)
        #expect(newKey.fingerprint.hex == string(r["key"]))
        check(Statement.rotation(storeId: Digest(hex: string(r["store"]))!, org: string(r["org"]), person: string(r["person"]),
                                 device: string(r["device"]), platform: Platform(rawValue: string(r["platform"]))!, key: newKey,
                                 previous: Digest(hex: string(r["previous_key"]))!, signedBy: string(r["signed_by"])),
              rotations[0], key)
        let l = links[0]["inputs"]!
        let linkKey = try DeviceKey(spki: spki, protection: KeyProtection(rawValue: string(l["key_protection"]))!, trust: .firstUse)
        #expect(linkKey.fingerprint.hex == string(l["key"]))
        let bytes = Statement.link(storeId: Digest(hex: string(l["store"]))!, org: string(l["org"]), person: string(l["person"]),
                                   device: string(l["device"]), platform: Platform(rawValue: string(l["platform"]))!,
                                   key: linkKey, introducedBy: string(l["introduced_by"]))
        check(bytes, links[0], key)
        try checkRecovery(doc, key)
        // The session challenge statement (§3.4): a sign-in, a revocation, signing out the others.
        guard case .array(let sessions)? = doc["session"] else { Issue.record("no session vectors"); return }
        #expect(sessions.count == 3)
        for v in sessions {
            let i = v["inputs"]!
            check(Statement.session(storeId: Digest(hex: string(i["store_id"]))!, device: string(i["device"]),
                                    purpose: string(i["purpose"]), challenge: Digest(hex: string(i["challenge"]))!), v, key)
        }
        let revoke = sessions[1]["inputs"]!
        #expect(RevocationProof.statement(storeId: Digest(hex: string(revoke["store_id"]))!, by: string(revoke["device"]),
                                          revoking: "laptop-quinn", challenge: Digest(hex: string(revoke["challenge"]))!)
                == Hex.decode(string(sessions[1]["statement_hex"])))
    }

    /// The recovery-key statements (§3.2) and the recovery link statement (§3.3).
    func checkRecovery(_ doc: JSON, _ key: DeviceKey) throws {
        guard case .array(let sets)? = doc["recovery_key"], case .array(let links)? = doc["recovery_link"] else {
            Issue.record("no recovery vectors"); return
        }
        #expect(sets.count == 2 && links.count == 1)
        for v in sets {
            let i = v["inputs"]!
            let previous = string(i["previous_key"])
            check(Statement.recoveryKey(storeId: Digest(hex: string(i["store"]))!, org: string(i["org"]), person: string(i["person"]),
                                        key: Digest(hex: string(i["key"]))!, previous: previous == "none" ? nil : Digest(hex: previous)!,
                                        signedBy: string(i["signed_by"])), v, key)
        }
        let l = links[0]["inputs"]!
        let linkKey = try DeviceKey(spki: key.spki, protection: KeyProtection(rawValue: string(l["key_protection"]))!, trust: .firstUse)
        check(Statement.recoveryLink(storeId: Digest(hex: string(l["store"]))!, org: string(l["org"]), person: string(l["person"]),
                                     device: string(l["device"]), platform: Platform(rawValue: string(l["platform"]))!, key: linkKey,
                                     recoveryKey: Digest(hex: string(l["recovery_key"]))!), links[0], key)
        // What the engine signs with: the trust's signed_by line.
        #expect(RecoveryTrust.device("iphone-quinn", signature: []).signedBy == string(sets[0]["inputs"]?["signed_by"]))
        #expect(RecoveryTrust.recoveryKey(signature: []).signedBy == string(sets[1]["inputs"]?["signed_by"]))
    }

    func check(_ bytes: [UInt8], _ v: JSON, _ key: DeviceKey) {
        #expect(Hex.encode(bytes) == string(v["statement_hex"]))
        #expect(bytes.withUnsafeBytes { Digest.sha256($0) }.hex == string(v["sha256"]))
        let der = Base64.decode(string(v["signature_der_base64"]))!
        #expect(key.verifies(P256Signature.normalize(der)!, over: bytes))
        #expect(key.verifies(Hex.decode(string(v["signature_raw_hex"]))!, over: bytes))
        #expect(!key.verifies(Hex.decode(string(v["signature_raw_hex"]))!, over: bytes + [0x0A]))
    }

    @Test func theIndependentScriptAgreesWithTheVectors() throws {
        let script = Self.file.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("tools/statement_vectors.py")
        let r = try IndependentVerifierTests.runPython([script.path])
        #expect(r.status == 0 && !r.signalled, "\(r.stdout)\(r.stderr)")
    }
}
