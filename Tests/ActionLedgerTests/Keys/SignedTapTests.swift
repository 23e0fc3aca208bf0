import Crypto
import Foundation
import Testing
@testable import ActionLedger

/// Taps, dismissals, edits and holds signed by device keys (Specs/statements.md §2).
@Suite struct SignedTapTests {
    @Test func aSignedPathIsRecordedWithItsProof() throws {
        let t = try keyedStore(stakes: .high)
        let phone = TestDeviceKey(), laptop = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "laptop"), laptop, claimedAt: t0.adding(milliseconds: -3_600_000))
        try t.ledger.signed(.tap(.confirm, actionId: "a1", device: "iphone"), phone)
        // No --user-verified: the key declared user-verification, so the signature counts as it.
        let r = try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), phone)
        #expect(r.action?.status == .approved)
        let events = try t.ledger.read { r in try (5...7).map { try r.event($0)!.event } }
        guard case .reviewed(let review) = events[0].payload, case .approved(let approval) = events[2].payload,
              let rp = review.proof, let ap = approval.proof else { Issue.record("no proofs"); return }
        #expect(events.allSatisfy { $0.schemaVersion == 3 })
        let laptopFingerprint = try laptop.key().fingerprint
        #expect(rp.level == .signed && rp.keyFingerprint == laptopFingerprint)
        #expect(rp.claimedAt == t0.adding(milliseconds: -3_600_000) && events[0].at == t0)
        #expect(ap.level == .signedUV && approval.userVerified)
        // JSON and bytes round-trip, and replay accepts the signed path.
        for e in events { #expect(EventCodec.encode(try Event(json: e.json())) == EventCodec.encode(e)) }
        #expect(try t.ledger.replayDecisions().mismatch == nil)
    }

    @Test func aKeyedDeviceMustSign() throws {
        let t = try keyedStore()
        try t.ledger.linkKeyed("iphone", TestDeviceKey())
        let e = try requireLedgerError(.proofRequired) { try t.ledger.run(.tap(.review, actionId: "a1", device: "iphone")) }
        #expect(e.details["device"] == .string("iphone"))
        try requireLedgerError(.proofRequired) { try t.ledger.run(.dismiss(actionId: "a1", device: "iphone", reason: "")) }
        // An unkeyed device cannot send a proof.
        try t.ledger.link("tablet")
        try requireLedgerError(.badProof) { try t.ledger.signed(.tap(.review, actionId: "a1", device: "tablet"), TestDeviceKey()) }
        #expect(try t.ledger.read { try $0.head().seq } == 4)
    }

    @Test func aStatementForAnythingElseIsRefused() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.run(.propose(proposal("a2")))
        let review = Command.tap(.review, actionId: "a1", device: "iphone")
        let tampers: [(String, (inout Statement.Tap) -> Void)] = [
            ("another action", { $0.actionId = "a2" }),
            ("another step", { $0.step = .approve }),
            ("another content hash", { $0.contentHash = Array("x".utf8).withUnsafeBytes { Digest.sha256($0) } }),
            ("another device", { $0.device = "laptop" }),
            ("another store", { $0.storeId = Array("other".utf8).withUnsafeBytes { Digest.sha256($0) } }),
            ("another claimed time", { $0.claimedAt = $0.claimedAt.adding(milliseconds: 1) }),
        ]
        for (what, tamper) in tampers {
            let e = try requireLedgerError(.badProof, what) { try t.ledger.signed(review, phone, tamper: tamper) }
            #expect(e.details["problem"] == "signature", "\(what)")
        }
        // Signed by another key than the device's.
        try requireLedgerError(.badProof) { try t.ledger.signed(review, TestDeviceKey()) }
        #expect(try t.ledger.read { try $0.head().seq } == 4)
    }

    @Test func aProofReplayedWithANewCommandIdIsRefused() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        let review = Command.tap(.review, actionId: "a1", device: "iphone")
        let statement = try t.ledger.statement(for: review, commandId: "cmd-a", claimedAt: t0)
        let proof = ProofInput(claimedAt: t0, signature: try phone.sign(statement.bytes))
        try t.ledger.execute(CommandRequest(review, commandId: "cmd-a", now: t0, proof: proof))
        // The same command id replays the original result; a new one is refused.
        #expect(try t.ledger.execute(CommandRequest(review, commandId: "cmd-a", now: t0, proof: proof)).replayed)
        let e = try requireLedgerError(.badProof) {
            try t.ledger.execute(CommandRequest(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "cmd-b", now: t0, proof: proof))
        }
        #expect(e.details["problem"] == "signature")
        // A client that says what it signed is told which line differs.
        var wrong = proof
        wrong.statement = statement.bytes
        let named = try requireLedgerError(.badProof) {
            try t.ledger.execute(CommandRequest(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "cmd-c", now: t0, proof: wrong))
        }
        #expect(named.details["problem"] == "statement" && named.message.contains("step"))
    }

    @Test func aRevokedDevicesValidSignatureIsRefused() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "stolen"))
        try requireLedgerError(.deviceRevoked) { try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone) }
    }

    @Test func theClaimedTimeMustBeFresh() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        let review = Command.tap(.review, actionId: "a1", device: "iphone")
        for (offset, ok) in [(-24 * 3_600_000 - 1, false), (5 * 60_000 + 1, false), (-24 * 3_600_000, true)] as [(Int64, Bool)] {
            let claimed = t0.adding(milliseconds: offset)
            if ok {
                try t.ledger.signed(review, phone, claimedAt: claimed)
            } else {
                let e = try requireLedgerError(.badProof) { try t.ledger.signed(review, phone, claimedAt: claimed) }
                #expect(e.details["problem"] == "claimed_at")
            }
        }
    }

    @Test func signedChangesBindTheirParameters() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        let until = t0.adding(milliseconds: 3_600_000)
        try requireLedgerError(.badProof) {
            try t.ledger.signed(.hold(actionId: "a1", device: "iphone", until: until), phone) { $0.until = until.adding(milliseconds: 1) }
        }
        try t.ledger.signed(.hold(actionId: "a1", device: "iphone", until: until), phone)
        try requireLedgerError(.badProof) {
            try t.ledger.signed(.edit(actionId: "a1", device: "iphone", text: "New"), phone) { $0.text = "Other" }
        }
        try t.ledger.signed(.edit(actionId: "a1", device: "iphone", text: "New"), phone)
        try requireLedgerError(.badProof) {
            try t.ledger.signed(.dismiss(actionId: "a1", device: "iphone", reason: "no"), phone) { $0.reason = "yes" }
        }
        try t.ledger.signed(.dismiss(actionId: "a1", device: "iphone", reason: "no"), phone)
        let types = try t.ledger.read { r in try (4...6).map { try r.event($0)!.event } }
        #expect(types.map(\.schemaVersion) == [2, 2, 3])
        for e in types { #expect(EventCodec.encode(try Event(json: e.json())) == EventCodec.encode(e)) }
        #expect(try t.ledger.replayDecisions().mismatch == nil)
    }

    @Test func aSignatureOverStaleContentIsStale() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        let before = try t.ledger.statement(for: .tap(.review, actionId: "a1", device: "iphone"), commandId: "cmd-r", claimedAt: t0)
        try t.ledger.signed(.edit(actionId: "a1", device: "iphone", text: "Changed"), phone)
        let proof = ProofInput(claimedAt: t0, signature: try phone.sign(before.bytes), contentHash: before.contentHash)
        try requireLedgerError(.staleContent) {
            try t.ledger.execute(CommandRequest(.tap(.review, actionId: "a1", device: "iphone"), commandId: "cmd-r", now: t0, proof: proof))
        }
    }
}
