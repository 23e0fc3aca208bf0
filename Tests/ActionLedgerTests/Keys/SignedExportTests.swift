import Foundation
import Testing
@testable import ActionLedger

/// Keyed links and signed taps survive export, the independent verifier and import.
@Suite struct SignedExportTests {
    static let examples = EventJSONTests.examples.deletingLastPathComponent().appendingPathComponent("signed-events.jsonl")

    /// Under the strict policy (Specs/policies/strict.json, a `policy.set` schema 2): a
    /// high-stakes path signed from two devices (one introduced by the other), a signed
    /// hold, edit and dismissal, a recorded refusal, a key rotation vouched for by the other
    /// device, a relying party and a WebAuthn-signed approval; and a second person's
    /// recovery: her first keyed device with her recovery key, revoked, a device linked by
    /// the recovery key, and two replacements of it (signed by that device, then by the key);
    /// last, quinn revokes a tablet of hers from her phone (its signed challenge recorded).
    static func signedStore() throws -> TempLedger {
        let t = try keyedStore(stakes: .high)
        let phone = TestDeviceKey(), laptop = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        try t.ledger.run(.setPolicy(try ProofPolicyTests.strict(), org: "quinn-co"))
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "laptop"), laptop)
        try t.ledger.signed(.hold(actionId: "a1", device: "iphone", until: t0.adding(milliseconds: 60_000)), phone)
        try t.ledger.signed(.edit(actionId: "a1", device: "iphone", text: "Changed"), phone)
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone)
        try t.ledger.signed(.tap(.confirm, actionId: "a1", device: "laptop"), laptop)
        try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), phone)
        try t.ledger.run(.propose(proposal("a2")))
        try t.ledger.signed(.dismiss(actionId: "a2", device: "laptop", reason: "not now"), laptop)
        // A signed dismissal of a decided action: refused, and recorded (tap.refused).
        _ = try? t.ledger.signed(.dismiss(actionId: "a1", device: "iphone", reason: "late"), phone)
        try t.ledger.rotate("laptop", to: TestDeviceKey(), signer: ("iphone", phone))
        // A security key introduced by the phone, approving with a WebAuthn assertion (UV).
        let auth = SoftwareAuthenticator()
        try t.ledger.run(.setRelyingParty(try RelyingParty(rpId: auth.rpId, origins: [auth.origin])))
        try t.ledger.linkKeyed("yubikey", auth.key, platform: .web, introducer: ("iphone", phone))
        try t.ledger.run(.propose(proposal("a3", stakes: .low)))
        try t.ledger.webauthn(.tap(.approve, actionId: "a3", device: "yubikey"), auth)
        let rheaPhone = TestDeviceKey(), rheaLaptop = TestDeviceKey(), first = TestDeviceKey(), second = TestDeviceKey()
        try t.ledger.linkFirst("rhea-phone", rheaPhone, recovery: first, person: "rhea")
        try t.ledger.run(.revokeDevice(device: "rhea-phone", reason: "lost"))
        try t.ledger.recover("rhea-laptop", rheaLaptop, signer: first, person: "rhea")
        try t.ledger.setRecovery(second, signer: rheaLaptop, device: "rhea-laptop", person: "rhea")
        try t.ledger.setRecovery(TestDeviceKey(), signer: second, device: nil, person: "rhea")
        try t.ledger.run(.linkDevice(device: "tablet", person: "quinn", org: "quinn-co", label: "Tablet", platform: .ios))
        try t.ledger.revoke("tablet", from: "iphone", phone)
        return t
    }

    /// Specs/schemas/examples/signed-events.jsonl (checked against the schemas by
    /// validate.py) is an export the engine wrote: its chain and every proof verify and
    /// import replays it. Signatures are randomised, so it is rewritten only on request
    /// (ACTIONLEDGER_WRITE_EXAMPLES=1), not compared byte for byte.
    @Test func theSignedExamplesAreTheEnginesOwn() throws {
        if ProcessInfo.processInfo.environment["ACTIONLEDGER_WRITE_EXAMPLES"] == "1" {
            var bytes: [UInt8] = []
            try Self.signedStore().ledger.exportJSONL { bytes += $0 }
            try Data(bytes).write(to: Self.examples)
        }
        #expect(try ExportVerifier.verify(path: Self.examples.path).head.seq == 27)
        let fresh = try TempLedger()
        #expect(try fresh.ledger.importJSONL(path: Self.examples.path).seq == 27)
        let kinds = Set(try String(contentsOf: Self.examples, encoding: .utf8).split(separator: "\n").map { line -> String in
            let e = try JSONParser.parse(String(line))
            guard case .number(let v)? = e["schema_version"] else { return "" }
            return "\(e["type"]!.stringValue)/\(Int(v))"
        })
        for k in ["device.linked/2", "action.reviewed/3", "action.confirmed/3", "action.approved/3", "action.dismissed/3",
                  "action.held/2", "action.edited/2", "policy.set/2", "device.key_rotated/1", "tap.refused/1",
                  "device.linked/3", "person.recovery_key_set/1", "device.revoked/2"] {
            #expect(kinds.contains(k), "\(k)")
        }
    }

    @Test func anExportWithKeysAndProofsVerifiesAndImports() throws {
        let t = try Self.signedStore()
        let (path, r) = try t.exportAndVerifyIndependently()
        #expect(r.status == 0 && r.stdout.hasPrefix("ok 27 "), "\(r.stdout)\(r.stderr)")
        #expect(try ExportVerifier.verify(path: path).head.seq == 27)
        let fresh = try TempLedger()
        let head = try fresh.ledger.importJSONL(path: path)
        #expect(head.seq == 27)
        #expect(try fresh.ledger.verifyProofs() == 19)
        #expect(try fresh.ledger.replayDecisions().mismatch == nil)
    }

    /// Anyone can re-chain an export; a forged proof still cannot verify.
    @Test func aReChainedForgeryIsCaughtOffline() throws {
        let t = try keyedStore(stakes: .low)
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), phone)
        let events = try t.ledger.read { r in try (1...4).map { try r.event($0)!.event } }
        func forged(_ change: (inout Event) -> Void) throws -> TempLedger {
            var copy = events
            change(&copy[3])
            let f = try TempLedger()
            try f.ledger.append(verbatim: copy.map { ($0, nil) })  // re-chained: every hash recomputed
            return f
        }
        let cases: [(String, (inout Event) -> Void)] = [
            ("signature byte", { e in
                if case .approved(var a) = e.payload { a.proof!.signature[5] ^= 1; e.payload = .approved(a) } }),
            ("claimed another command", { e in e.commandId = "cmd-forged" }),
            ("unsigned", { e in if case .approved(var a) = e.payload { a.proof = nil; e.payload = .approved(a) } }),
        ]
        for (what, change) in cases {
            let f = try forged(change)
            let e = try requireLedgerError(.integrityFailure, what) { try f.ledger.verifyProofs() }
            #expect(e.details["seq"] == 4, "\(what)")
            #expect(try f.ledger.replayDecisions().mismatch?.seq == 4, "\(what)")
            let (path, r) = try f.exportAndVerifyIndependently()
            #expect(r.status == 1 && r.stdout.hasPrefix("seq 4: "), "\(what): \(r.stdout)\(r.stderr)")
            let v = try requireLedgerError(.integrityFailure, what) { try ExportVerifier.verify(path: path) }
            #expect(v.details["line"] == 4 && v.details["seq"] == 4, "\(what)")
            // Import verifies the file first: the forged proof is bad input, named by line and field.
            let fresh = try TempLedger()
            let i = try requireLedgerError(.invalidInput, what) { try fresh.ledger.importJSONL(path: path) }
            #expect(i.details["field"] == "data.proof" && i.details["line"] == 4, "\(what)")
        }
    }

    @Test func aSecondKeyOnFirstUseIsCaughtByReplay() throws {
        let t = try keyedStore()
        try t.ledger.linkKeyed("iphone", TestDeviceKey())
        var events = try t.ledger.read { r in try (1...3).map { try r.event($0)!.event } }
        var second = events[2]
        second.seq = 4
        second.commandId = "cmd-second"
        if case .deviceLinked(var d) = second.payload { d.device = "laptop"; d.key = try TestDeviceKey().key(); second.payload = .deviceLinked(d) }
        events.append(second)
        let f = try TempLedger()
        try f.ledger.append(verbatim: events.map { ($0, nil) })
        #expect(try f.ledger.replayDecisions().mismatch?.code == "introduction_required")
        try requireLedgerError(.integrityFailure) { try f.ledger.verifyProofs() }
    }
}
