import Foundation
import Testing
@testable import ActionLedger

extension Ledger {
    /// `key`'s signature, as device `by`'s, over a fresh session challenge revoking `target`
    /// (statements.md §3.4), naming the fingerprint of `other` when given.
    func revocationProof(_ target: String, by: String, _ key: TestDeviceKey, other: TestDeviceKey? = nil) throws -> RevocationProof {
        let storeId = try read { try $0.storeId() }!
        let challenge = Digest(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) })!
        let statement = RevocationProof.statement(storeId: storeId, by: by, revoking: target, challenge: challenge)
        return RevocationProof(keyFingerprint: try (other ?? key).key().fingerprint, challenge: challenge, signature: try key.sign(statement))
    }

    /// quinn revokes `target` from her device `by`, whose key signs the session challenge
    /// naming `signedTarget`, as `ledger serve` hands it to the engine.
    @discardableResult
    func revoke(_ target: String, from by: String, _ key: TestDeviceKey, signedTarget: String? = nil,
                fingerprintOf other: TestDeviceKey? = nil) throws -> CommandResult {
        let proof = try revocationProof(signedTarget ?? target, by: by, key, other: other)
        return try execute(CommandRequest(.revokeDevice(device: target, reason: "lost", by: by, proof: proof), now: t0, actor: "quinn"))
    }
}

/// A revocation she makes from one of her devices records that device's signature over the
/// challenge: the engine checks it, and anyone can check it again from the log.
@Suite struct RevocationProofTests {
    /// quinn's user-verified iPhone, and two unkeyed devices of hers.
    func store() throws -> (TempLedger, TestDeviceKey) {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        for d in ["ipad", "old-phone"] {
            try t.ledger.run(.linkDevice(device: d, person: "quinn", org: "quinn-co", label: d, platform: .ios))
        }
        return (t, phone)
    }

    @Test func aRevocationFromHerDeviceRecordsItsSignatureAndEveryVerifierProvesIt() throws {
        let (t, phone) = try store()
        let proven = try t.ledger.verifyProofs()
        let stored = try t.ledger.revoke("ipad", from: "iphone", phone).events[0]
        guard case .deviceRevoked(let r) = stored.event.payload, let proof = r.proof else {
            Issue.record("no proof recorded: \(stored.event.payload)"); return
        }
        #expect(stored.event.schemaVersion == 2 && stored.event.device == "iphone" && stored.event.actor == "quinn")
        #expect(proof.keyFingerprint == (try phone.key(.userVerification).fingerprint))
        #expect(stored.event.proofSummary == ProofSummary(level: .signedUV, keyFingerprint: proof.keyFingerprint,
                                                          userVerificationBasis: "declared_key_protection"))
        #expect(try t.ledger.verifyProofs() == proven + 1)
        #expect(try t.ledger.replayDecisions().mismatch == nil)
        let (path, python) = try t.exportAndVerifyIndependently()
        #expect(python.status == 0, "\(python.stdout)\(python.stderr)")
        #expect(try ExportVerifier.verify(path: path).head.seq == stored.event.seq)
        let fresh = try TempLedger()
        #expect(try fresh.ledger.importJSONL(path: path).seq == stored.event.seq)
        #expect(try fresh.ledger.verifyProofs() == proven + 1)
        // The operator's revocation is no device's: no proof, no proof summary.
        let operators = try t.ledger.run(.revokeDevice(device: "old-phone", reason: "sold")).events[0].event
        #expect(operators.schemaVersion == 1 && operators.device == nil && operators.proofSummary == nil)
    }

    @Test func theEngineRecordsNoRevocationItsSignatureDoesNotProve() throws {
        let (t, phone) = try store()
        let head = try t.ledger.read { try $0.head() }
        let cases: [(String, () throws -> Void)] = [
            ("no signature", { try t.ledger.execute(CommandRequest(.revokeDevice(device: "ipad", reason: "", by: "iphone"),
                                                                   now: t0, actor: "quinn")) }),
            ("signed to revoke another device", { try t.ledger.revoke("ipad", from: "iphone", phone, signedTarget: "old-phone") }),
            ("signed by another key", { try t.ledger.revoke("ipad", from: "iphone", TestDeviceKey(), fingerprintOf: phone) }),
            ("naming another key", { try t.ledger.revoke("ipad", from: "iphone", phone, fingerprintOf: TestDeviceKey()) }),
        ]
        for (what, attempt) in cases {
            try requireLedgerError(.badProof, what) { try attempt() }
        }
        #expect(try t.ledger.read { try $0.head() } == head)
        #expect(try t.ledger.read { try $0.deviceState("ipad")?.revokedAt } == nil)
    }

    /// Anyone can re-chain an export; a revocation's forged signature still cannot verify.
    @Test func aReChainedForgeryOfARevocationIsCaughtOffline() throws {
        let (t, phone) = try store()
        try t.ledger.revoke("ipad", from: "iphone", phone)
        let head = try t.ledger.read { try $0.head() }.seq
        let events = try t.ledger.read { r in try (1...head).map { try r.event($0)!.event } }
        func forged(_ change: (inout Event) -> Void) throws -> TempLedger {
            var copy = events
            change(&copy[Int(head) - 1])
            let f = try TempLedger()
            try f.ledger.append(verbatim: copy.map { ($0, nil) })  // re-chained: every hash recomputed
            return f
        }
        func revocation(_ change: @escaping (inout DeviceRevocation) -> Void) -> (inout Event) -> Void {
            { e in if case .deviceRevoked(var r) = e.payload { change(&r); e.payload = .deviceRevoked(r) } }
        }
        let cases: [(String, (inout Event) -> Void)] = [
            ("signature byte", revocation { $0.proof!.signature[7] ^= 1 }),
            ("another device revoked", revocation { $0.device = "old-phone" }),
            ("another challenge", revocation { $0.proof!.challenge = .zero }),
            ("the operator's, with her signature", { e in e.device = nil; e.actor = "operator" }),
        ]
        for (what, change) in cases {
            let f = try forged(change)
            let e = try requireLedgerError(.integrityFailure, what) { try f.ledger.verifyProofs() }
            #expect(e.details["seq"] == .number(Double(head)), "\(what)")
            #expect(try f.ledger.replayDecisions().mismatch?.seq == head, "\(what)")
            let (path, r) = try f.exportAndVerifyIndependently()
            #expect(r.status == 1 && r.stdout.hasPrefix("seq \(head): "), "\(what): \(r.stdout)\(r.stderr)")
            try requireLedgerError(.integrityFailure, what) { try ExportVerifier.verify(path: path) }
            let fresh = try TempLedger()
            try requireLedgerError(.invalidInput, what) { try fresh.ledger.importJSONL(path: path) }
        }
        // Without its signature it reads as a schema-1 revocation, as builds before this one
        // recorded: accepted, and shown as proving nothing.
        let stripped = try forged(revocation { $0.proof = nil })
        #expect(try stripped.ledger.replayDecisions().mismatch == nil)
        let last = try stripped.ledger.read { try $0.event(head)!.event }
        #expect(last.schemaVersion == 1 && last.proofSummary == ProofSummary(level: .none))
    }
}
