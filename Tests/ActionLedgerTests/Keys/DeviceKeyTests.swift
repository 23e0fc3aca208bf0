import Crypto
import Foundation
import Testing
@testable import ActionLedger

/// `device.linked` schema 2: a device's P-256 key, and who may vouch for it
/// (Specs/statements.md §1.1).
@Suite struct DeviceKeyTests {
    /// statements.md §1: a compressed point is re-encoded uncompressed, one spelling per key.
    @Test func aCompressedPointIsReadAsTheUncompressedKey() throws {
        let key = TestDeviceKey()
        let compressed = Hex.decode("3039301306072a8648ce3d020106082a8648ce3d030107032200")!
            + Array(key.privateKey.publicKey.compressedRepresentation)
        #expect(try DeviceKey.readPublicKey(compressed) == key.spki)
        #expect(throws: LedgerError.self) { try DeviceKey.readPublicKey(Array(compressed.dropLast())) }
    }

    @Test func aFirstKeyedDeviceIsTrustedOnFirstUseAndRecorded() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        let stored = try t.ledger.read { try $0.event(3)! }.event
        #expect(stored.schemaVersion == 2)
        guard case .deviceLinked(let link) = stored.payload, let key = link.key else { Issue.record("no key"); return }
        #expect(key.spki == phone.spki && key.trust == .firstUse && key.protection == .userVerification)
        #expect(key.fingerprint == phone.spki.withUnsafeBytes { Digest.sha256($0) })
        // The JSON form names the fingerprint and round-trips to the same bytes.
        let json = stored.json()
        #expect(json["data"]?["key"]?["fingerprint"] == .string(key.fingerprint.hex))
        let back = try Event(json: json)
        #expect(EventCodec.encode(back) == EventCodec.encode(stored))
        #expect(try t.ledger.read { try $0.deviceState("iphone") }?.key == key)
    }

    @Test func theOperatorMayNotLinkASecondKeyedDevice() throws {
        let t = try keyedStore()
        try t.ledger.linkKeyed("iphone", TestDeviceKey())
        try requireLedgerError(.introductionRequired) { try t.ledger.linkKeyed("laptop", TestDeviceKey(), platform: .cli) }
        // Revoking the first key does not reopen trust on first use.
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "lost"))
        try requireLedgerError(.introductionRequired) { try t.ledger.linkKeyed("laptop", TestDeviceKey(), platform: .cli) }
        // An unkeyed device stays open to the operator.
        try t.ledger.link("tablet")
    }

    @Test func anIntroducedKeyNeedsAnUnrevokedKeyedDeviceOfTheSamePerson() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), laptop = TestDeviceKey(), stranger = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        let link = try t.ledger.read { try $0.deviceState("laptop") }
        #expect(link?.key?.introducer == "iphone")
        // Signed by another key than the introducer's: bad_proof.
        try requireLedgerError(.badProof) { try t.ledger.linkKeyed("l2", TestDeviceKey(), introducer: ("iphone", stranger)) }
        // Another person's keyed device cannot introduce one for quinn.
        try t.ledger.linkKeyed("rphone", stranger, person: "riley")
        try requireLedgerError(.introductionRequired) { try t.ledger.linkKeyed("l3", TestDeviceKey(), introducer: ("rphone", stranger)) }
        // An unkeyed device cannot introduce; nor can a revoked one.
        try t.ledger.link("tablet")
        try requireLedgerError(.introductionRequired) { try t.ledger.linkKeyed("l4", TestDeviceKey(), introducer: ("tablet", phone)) }
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "lost"))
        try requireLedgerError(.introductionRequired) { try t.ledger.linkKeyed("l5", TestDeviceKey(), introducer: ("iphone", phone)) }
        try t.ledger.linkKeyed("l6", TestDeviceKey(), introducer: ("laptop", laptop))
        #expect(try t.ledger.read { try $0.head().seq } == 8)
    }

    @Test func aCLIDeviceCannotDeclareUserVerification() throws {
        let t = try keyedStore()
        try requireLedgerError(.invalidInput) { try t.ledger.linkKeyed("laptop", TestDeviceKey(), protection: .userVerification, platform: .cli) }
        try t.ledger.linkKeyed("laptop", TestDeviceKey(), protection: .device, platform: .cli)
    }

    @Test func keysAreCanonicalSPKIOfP256() throws {
        expectLedgerError(.invalidInput) { try DeviceKey(spki: [0x30, 0x00], protection: .none, trust: .firstUse) }
        let p384 = Array(P384.Signing.PrivateKey().publicKey.derRepresentation)
        expectLedgerError(.invalidInput) { try DeviceKey(spki: p384, protection: .none, trust: .firstUse) }
        // PEM and DER files read to the same bytes.
        let k = P256.Signing.PrivateKey().publicKey
        #expect(try DeviceKey.readPublicKey(Array(k.pemRepresentation.utf8)) == Array(k.derRepresentation))
        #expect(try DeviceKey.readPublicKey(Array(k.derRepresentation)) == Array(k.derRepresentation))
    }

    @Test func aFingerprintThatIsNotTheKeysIsRefusedInJSON() throws {
        let t = try keyedStore()
        try t.ledger.linkKeyed("iphone", TestDeviceKey())
        guard case .object(var o) = try t.ledger.read({ try $0.event(3)! }).event.json(),
              case .object(var data) = o["data"], case .object(var key) = data["key"] else { Issue.record("shape"); return }
        key["fingerprint"] = .string(String(repeating: "0", count: 64))
        data["key"] = .object(key)
        o["data"] = .object(data)
        expectLedgerError(.invalidInput) { try Event(json: .object(o)) }
    }
}
