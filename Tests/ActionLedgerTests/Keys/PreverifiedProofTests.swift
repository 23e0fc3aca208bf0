import Foundation
import Testing
@testable import ActionLedger

/// A proof verified outside the write lock (`Ledger.preverify`) is trusted under the lock
/// only while the statement it verified is still the one the engine would build: an edit
/// of the action since then sends the tap back through the full check.
@Suite struct PreverifiedProofTests {
    /// A signed approval of a1 from `device`, verified against the current snapshot, as
    /// `execute` does before queueing it (but not yet submitted).
    private func preverifiedApproval(_ l: Ledger, _ device: String, _ key: TestDeviceKey, naming content: ActionLedger.Digest? = nil)
        throws -> CommandRequest {
        let command = Command.tap(.approve, actionId: "a1", device: device)
        let id = CommandRequest.newCommandId()
        var statement = try l.statement(for: command, commandId: id, claimedAt: t0)
        if let content { statement.contentHash = content }
        var proof = ProofInput(claimedAt: t0, signature: try key.sign(statement.bytes))
        proof.contentHash = content
        let r = l.preverify([CommandRequest(command, commandId: id, now: t0, proof: proof)])[0]
        #expect(r.preverified != nil, "the proof should verify against the snapshot")
        return r
    }

    private func submit(_ l: Ledger, _ request: CommandRequest) throws -> CommandResult {
        try l.requireWriter().submit([request], atomic: false)[0].get()
    }

    @Test func aPreverifiedProofStillValidIsRecorded() throws {
        let t = try keyedStore(stakes: .low)
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        let r = try submit(t.ledger, try preverifiedApproval(t.ledger, "iphone", phone))
        guard case .approved(let a) = r.events.first?.event.payload, let proof = a.proof else {
            Issue.record("the approval should be recorded with its proof")
            return
        }
        #expect(proof.keyFingerprint == (try phone.key().fingerprint))
        #expect(proof.contentHash == (try t.ledger.read { try $0.actionState("a1") })?.contentHash)
        #expect(try t.ledger.replayDecisions().mismatch == nil)
    }

    @Test func anEditSincePreverificationSendsTheTapThroughTheFullCheck() throws {
        let t = try keyedStore(stakes: .low)
        let phone = TestDeviceKey(), laptop = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        let request = try preverifiedApproval(t.ledger, "iphone", phone)
        try t.ledger.signed(.edit(actionId: "a1", device: "laptop", text: "A new caption"), laptop)
        let head = try t.ledger.read { try $0.head().seq }
        // Signed over the old content: the statement for the current content does not verify.
        let e = try requireLedgerError(.badProof) { try submit(t.ledger, request) }
        #expect(e.details["problem"] == JSON.string("signature"))
        #expect(try t.ledger.read { try $0.head().seq } == head)
    }

    @Test func aProofNamingContentEditedSinceIsStale() throws {
        let t = try keyedStore(stakes: .low)
        let phone = TestDeviceKey(), laptop = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        let shown = try t.ledger.read { try $0.actionState("a1") }!.contentHash
        let request = try preverifiedApproval(t.ledger, "iphone", phone, naming: shown)
        try t.ledger.signed(.edit(actionId: "a1", device: "laptop", text: "A new caption"), laptop)
        // The statement (naming the content shown) is unchanged, so the proof verified outside
        // the lock stands; the policy then refuses a tap on content the action no longer has.
        try requireLedgerError(.staleContent) { try submit(t.ledger, request) }
        #expect(try t.ledger.read { try $0.actionState("a1") }?.status == .pending)
    }
}
