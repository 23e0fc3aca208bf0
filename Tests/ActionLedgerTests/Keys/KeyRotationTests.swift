import Foundation
import Testing
@testable import ActionLedger

extension Ledger {
    /// Rotates `device` to `newKey`, the rotation statement signed by `signer` (a device id
    /// and its key in force), optionally over a `tamper`ed statement.
    @discardableResult
    func rotate(_ device: String, to newKey: TestDeviceKey, signer: (String, TestDeviceKey),
                protection: KeyProtection = .device, tamper: (inout [UInt8]) -> Void = { _ in }) throws -> CommandResult {
        var key = try newKey.key(protection)
        var statement = try rotationStatement(device: device, key: key, signedBy: signer.0)
        tamper(&statement)
        key.trust = .introducedBy(device: signer.0, signature: try signer.1.sign(statement))
        return try run(.rotateDeviceKey(device: device, key: key))
    }
}

/// `device.key_rotated` (Specs/statements.md §3.1): a new key needs a keyed device of the
/// person; signatures are checked against the key in force at their seq, in the engine and
/// offline.
@Suite struct KeyRotationTests {
    @Test func aRotatedOutKeyNoLongerSigns() throws {
        let t = try keyedStore()
        let old = TestDeviceKey(), new = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", old)
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), old)
        let r = try t.ledger.rotate("iphone", to: new, signer: ("iphone", old))
        guard case .deviceKeyRotated(let k)? = r.events.first?.event.payload else { Issue.record("no rotation"); return }
        let (oldPrint, newPrint) = (try old.key().fingerprint, try new.key().fingerprint)
        #expect(k.previousFingerprint == oldPrint && k.key.fingerprint == newPrint)
        let e = try requireLedgerError(.badProof) { try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), old) }
        #expect(e.details["problem"] == "signature")
        try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), new)
        // The review stays checked against the old key, the approval against the new one.
        #expect(try t.ledger.verifyProofs() == 4)
        #expect(try t.ledger.replayDecisions().mismatch == nil)
        let event = try t.ledger.read { try $0.event(5)!.event }
        #expect(EventCodec.encode(try Event(json: event.json())) == EventCodec.encode(event))
        let (path, py) = try t.exportAndVerifyIndependently()
        #expect(py.status == 0, "\(py.stdout)\(py.stderr)")
        let fresh = try TempLedger()  // held: a temporary's deinit would remove its directory mid-import
        #expect(try fresh.ledger.importJSONL(path: path).seq == 6)
    }

    @Test func anotherKeyedDeviceOfHersMayVouch() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), laptop = TestDeviceKey(), new = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        try t.ledger.rotate("iphone", to: new, signer: ("laptop", laptop), protection: .userVerification)
        let r = try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), new)
        guard case .reviewed(let tap)? = r.events.first?.event.payload else { Issue.record("no review"); return }
        #expect(tap.proof?.level == .signedUV)
        #expect(try t.ledger.replayDecisions().mismatch == nil)
    }

    @Test func whoMayRotateAndWhatIsRefused() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), laptop = TestDeviceKey(), other = TestDeviceKey(), new = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        try t.ledger.linkKeyed("ricos", other, person: "rico")
        try t.ledger.link("tablet")
        let head = try t.ledger.read { try $0.head().seq }
        try requireLedgerError(.introductionRequired, "another person's device") {
            try t.ledger.rotate("iphone", to: new, signer: ("ricos", other))
        }
        try requireLedgerError(.introductionRequired, "an unkeyed device") { try t.ledger.rotate("iphone", to: new, signer: ("tablet", new)) }
        try requireLedgerError(.badProof, "signed by the new key itself") { try t.ledger.rotate("iphone", to: new, signer: ("iphone", new)) }
        try requireLedgerError(.badProof, "another statement") {
            try t.ledger.rotate("iphone", to: new, signer: ("iphone", phone)) { $0 += Array("x".utf8) }
        }
        try requireLedgerError(.invalidInput, "the same key") { try t.ledger.rotate("iphone", to: phone, signer: ("iphone", phone)) }
        try requireLedgerError(.invalidInput, "an unkeyed device has nothing to rotate") {
            try t.ledger.run(.rotateDeviceKey(device: "tablet", key: try new.key(trust: .introducedBy(device: "iphone", signature: []))))
        }
        try requireLedgerError(.introductionRequired, "first use") {
            try t.ledger.run(.rotateDeviceKey(device: "iphone", key: try new.key()))
        }
        try requireLedgerError(.invalidInput, "a cli key declaring user verification") {
            try t.ledger.rotate("laptop", to: new, signer: ("laptop", laptop), protection: .userVerification)
        }
        try requireLedgerError(.unknownDevice) { try t.ledger.rotate("nope", to: new, signer: ("iphone", phone)) }
        #expect(try t.ledger.read { try $0.head().seq } == head)
        // A revoked signer cannot vouch, and a revoked device's key cannot change.
        try t.ledger.run(.revokeDevice(device: "laptop", reason: "lost"))
        try requireLedgerError(.introductionRequired) { try t.ledger.rotate("iphone", to: new, signer: ("laptop", laptop)) }
        try requireLedgerError(.deviceRevoked) { try t.ledger.rotate("laptop", to: new, signer: ("iphone", phone)) }
    }

    /// A re-chained export whose rotation was forged (signed by no device of hers) is
    /// refused by verify, replay and the independent verifier, naming the rotation's seq.
    @Test func aForgedRotationIsCaughtOffline() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), thief = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.rotate("iphone", to: TestDeviceKey(), signer: ("iphone", phone))
        var events = try t.ledger.read { r in try (1...4).map { try r.event($0)!.event } }
        guard case .deviceKeyRotated(var k) = events[3].payload else { Issue.record("no rotation"); return }
        // The thief's own key, "signed" by the phone with a signature the thief made.
        var key = try thief.key()
        let statement = Statement.rotation(storeId: try t.ledger.read { try $0.storeId() }!, org: "quinn-co", person: "quinn",
                                           device: "iphone", platform: .ios, key: key, previous: k.previousFingerprint, signedBy: "iphone")
        key.trust = .introducedBy(device: "iphone", signature: try thief.sign(statement))
        k.key = key
        events[3].payload = .deviceKeyRotated(k)
        let f = try TempLedger()
        try f.ledger.append(verbatim: events.map { ($0, nil) })
        let e = try requireLedgerError(.integrityFailure) { try f.ledger.verifyProofs() }
        #expect(e.details["seq"] == 4 && e.details["field"] == "data.key")
        #expect(try f.ledger.replayDecisions().mismatch?.seq == 4)
        let (path, py) = try f.exportAndVerifyIndependently()
        #expect(py.status == 1 && py.stdout.hasPrefix("seq 4: "), "\(py.stdout)\(py.stderr)")
        try requireLedgerError(.integrityFailure) { try ExportVerifier.verify(path: path) }
    }
}

extension KeyRotationTests {
    /// `ledger devices rotate-key`: the CLI signs the rotation with the device's current key.
    @Test func theCLIRotatesAndTheOldKeyIsRefused() throws {
        let store = try ProcessFixture("rotate")
        func path(_ name: String) -> String { store.path(name) }
        func ledger(_ args: String..., stdin: String? = nil) throws -> LedgerProcess.Output {
            try store.ledger(args, stdin: stdin)
        }
        #expect(try ledger("devices", "keygen", "--out", path("old")).status == 0)
        #expect(try ledger("devices", "keygen", "--out", path("new")).status == 0)
        #expect(try ledger("devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "iPhone",
                           "--platform", "ios", "--public-key", path("old.pub"), "--key-protection", "device").status == 0)
        #expect(try ledger("propose", "-", stdin: CLITests.proposalJSON).status == 0)
        // Signed by the new key, which is not yet in force: refused, nothing written.
        #expect(try ledger("devices", "rotate-key", "iphone", "--public-key", path("new.pub"), "--key", path("new.key")).status == 26)
        let r = try ledger("devices", "rotate-key", "iphone", "--public-key", path("new.pub"), "--key", path("old.key"), "--json",
                           "--command-id", "rot-1")
        #expect(r.status == 0 && r.stdout.contains(#""type":"device.key_rotated""#), "\(r.stdout)\(r.stderr)")
        // The same command retried (its answer lost, say) is replayed, though the CLI signs anew.
        let again = try ledger("devices", "rotate-key", "iphone", "--public-key", path("new.pub"), "--key", path("old.key"), "--json",
                               "--command-id", "rot-1")
        #expect(again.status == 0 && again.stdout.contains(#""replayed":true"#), "\(again.stdout)\(again.stderr)")
        #expect(try ledger("review", "p1", "--device", "iphone", "--key", path("old.key")).status == 26)
        #expect(try ledger("review", "p1", "--device", "iphone", "--key", path("new.key")).status == 0)
        #expect(try ledger("verify", "--deep").status == 0)
        #expect(try ledger("audit", "device", "iphone").stdout.contains("device.key_rotated"))
    }
}
