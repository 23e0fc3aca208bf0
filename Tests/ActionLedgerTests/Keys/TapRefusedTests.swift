import Foundation
import Testing
@testable import ActionLedger

/// `tap.refused` (Specs/policy.md §7, statements.md §2.3): a refusal whose proof verifies is
/// recorded and registers its command id (the proof is spent); unauthenticated ones write
/// nothing; a device's recorded refusals are rate-limited; every checker verifies them offline.
@Suite struct TapRefusedTests {
    static func head(_ t: TempLedger) throws -> UInt64 { try t.ledger.read { try $0.head().seq } }

    /// Every offline check accepts the store, and its export verifies independently.
    static func verifiesEverywhere(_ t: TempLedger) throws {
        _ = try t.ledger.verify(VerifyOptions(deep: true))
        _ = try t.ledger.verifyProofs()
        #expect(try t.ledger.replayDecisions().mismatch == nil)
        let (path, py) = try t.exportAndVerifyIndependently()
        #expect(py.status == 0, "\(py.stdout)\(py.stderr)")
        let fresh = try TempLedger()
        #expect(try fresh.ledger.importJSONL(path: path).seq == (try head(t)))
        _ = try fresh.ledger.verify(VerifyOptions(deep: true))
    }

    @Test func aRevokedDevicesValidSignatureIsRecorded() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "stolen"))
        let e = try requireLedgerError(.deviceRevoked) {
            try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone, commandId: "cmd-stolen")
        }
        #expect(e.details["recorded_seq"] == 5)
        let event = try t.ledger.read { try $0.event(5)!.event }
        guard case .tapRefused(let r) = event.payload else { Issue.record("not recorded: \(event.type)"); return }
        #expect(r.code == "device_revoked" && r.step == .review && event.device == "iphone" && event.actionId == "a1")
        // The audit rows show how the refused attempt was proven, as they do for a counted tap.
        #expect(event.proofSummary == ProofSummary(level: .signed, keyFingerprint: r.proof.keyFingerprint))
        #expect(r.statement == (try t.ledger.statement(for: .tap(.review, actionId: "a1", device: "iphone"), commandId: "cmd-stolen",
                                                       claimedAt: t0).bytes))
        // Its command id is registered to the refusal, and the action is unchanged.
        #expect(try t.ledger.read { try $0.command("cmd-stolen") }.map { [$0.first, UInt64($0.count)] } == [5, 1])
        #expect(try t.ledger.read { try $0.actionState("a1")?.taps.isEmpty } == true)
        // The same signed review again gets the same refusal, and appends nothing.
        let again = try requireLedgerError(.deviceRevoked) {
            try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone, commandId: "cmd-stolen")
        }
        #expect(again.details["recorded_seq"] == 5 && again.message.contains("spent"))
        #expect(try Self.head(t) == 5)
        #expect(EventCodec.encode(try Event(json: event.json())) == EventCodec.encode(event))
        try Self.verifiesEverywhere(t)
    }

    /// quinn's keyed iphone signs an approve of a1 (medium stakes) under `cmd-early` before
    /// any review: refused (`taps_required`) and recorded at seq 4.
    static func approvedBeforeItsReview() throws -> (TempLedger, TestDeviceKey, Command, ProofInput) {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        let approve = Command.tap(.approve, actionId: "a1", device: "iphone")
        let statement = try t.ledger.statement(for: approve, commandId: "cmd-early", claimedAt: t0)
        let proof = ProofInput(claimedAt: t0, signature: try phone.sign(statement.bytes))
        try requireLedgerError(.tapsRequired) { try t.ledger.execute(CommandRequest(approve, commandId: "cmd-early", now: t0, proof: proof)) }
        return (t, phone, approve, proof)
    }

    /// A proof is used once, refused or not: an approve signed before its review is refused
    /// and recorded, and whoever submits it again later (the device's queue, or anyone who
    /// read it in the log) gets that refusal back, though the review has come since.
    /// `cmd-early` is registered to the refusal at seq 4; once the review is in, the same
    /// signed approve under it gets that refusal back and appends nothing.
    static func expectSpent(_ t: TempLedger, _ phone: TestDeviceKey, _ approve: Command, _ proof: ProofInput) throws {
        #expect(try t.ledger.read { try $0.command("cmd-early") }.map { [$0.first, UInt64($0.count)] } == [4, 1])
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone)
        let e = try requireLedgerError(.tapsRequired) {
            try t.ledger.execute(CommandRequest(approve, commandId: "cmd-early", now: t0.adding(milliseconds: 1_000), proof: proof))
        }
        #expect(e.details["recorded_seq"] == 4 && e.message.contains("spent"))
        #expect(try Self.head(t) == 5)
    }

    @Test func aRecordedRefusalSpendsItsProof() throws {
        let (t, phone, approve, proof) = try Self.approvedBeforeItsReview()
        #expect(try Self.head(t) == 4)
        try Self.expectSpent(t, phone, approve, proof)
        #expect(try t.ledger.read { try $0.actionState("a1")?.status } == .pending)
        // Another command under that id is refused as a used id, and writes nothing.
        try requireLedgerError(.invalidInput) {
            try t.ledger.signed(.dismiss(actionId: "a1", device: "iphone", reason: "x"), phone, commandId: "cmd-early")
        }
        #expect(try Self.head(t) == 5)
        // A new statement, under a new command id, approves.
        #expect(try t.ledger.signed(approve, phone).action?.status == .approved)
        // A stale signature on a decided action: already_decided, recorded too.
        try requireLedgerError(.alreadyDecided) { try t.ledger.signed(.dismiss(actionId: "a1", device: "iphone", reason: "x"), phone) }
        #expect(try Self.head(t) == 7)
        try Self.verifiesEverywhere(t)
    }

    /// A store written before recorded refusals registered their ids (an earlier build) and
    /// where a spent proof then ran: its index still verifies, audit replay reports the
    /// reuse, and its export is refused by import.
    @Test func aSpentProofThatRanInAnEarlierStoreIsReported() throws {
        let (t, phone, approve, proof) = try Self.approvedBeforeItsReview()
        let legacy = try Self.legacyStore(of: t)
        _ = try legacy.ledger.verify(VerifyOptions(deep: true))
        #expect(try legacy.ledger.replayDecisions().mismatch == nil)
        try legacy.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone)
        // There the spent proof still runs (its id was never registered) ...
        #expect(try legacy.ledger.execute(CommandRequest(approve, commandId: "cmd-early", now: t0, proof: proof)).action?.status == .approved)
        // ... and every check names it: the index is as that build left it, the reuse is not.
        _ = try legacy.ledger.verify(VerifyOptions(deep: true))
        let m = try legacy.ledger.replayDecisions().mismatch
        #expect(m?.rule == "refusal.replayed" && m?.seq == 6, "\(String(describing: m))")
        let (path, _) = try legacy.exportAndVerifyIndependently()
        let fresh = try TempLedger()
        try requireLedgerError(.invalidInput) { _ = try fresh.ledger.importJSONL(path: path) }
        #expect(try fresh.ledger.read { try $0.head().seq } == 0)
    }

    /// The four events of `t` (``approvedBeforeItsReview()``) as a build before refusals registered
    /// their ids left them: the refusal's id free, and `meta` at layout 3. (The ledger stays
    /// open as it was opened, so it still takes writes: as the earlier build did.)
    static func legacyStore(of t: TempLedger) throws -> TempLedger {
        let legacy = try TempLedger()
        let events = try t.ledger.read { r in try (1...4).map { try r.event($0)!.event } }
        try legacy.ledger.perform { session in
            for e in events {
                try session.appendVerbatim(e, expectedHash: nil)
                if e.type != .tapRefused { try session.indexVerbatimCommand(e.commandId, seq: e.seq) }
            }
        }
        try legacy.ledger.environment.write { txn in try LogDatabases.open(txn)!.meta.put(txn, key: MetaLayout.key, value: [3]) }
        return legacy
    }

    /// `ledger migrate` registers the ids an earlier build left free (layout 4), so those
    /// refusals' proofs are spent too; from then on `verify --deep` requires the entry.
    @Test func migrateRegistersTheIdsOfRefusalsRecordedBeforeTheRule() throws {
        let (t, phone, approve, proof) = try Self.approvedBeforeItsReview()
        let legacy = try Self.legacyStore(of: t)
        #expect(try legacy.ledger.read { try $0.command("cmd-early") } == nil)
        _ = try legacy.migrate()
        try Self.expectSpent(legacy, phone, approve, proof)
        _ = try legacy.ledger.verify(VerifyOptions(deep: true))
        // At layout 4 a refusal without its entry is a missing index entry.
        try legacy.ledger.environment.write { txn in _ = try LogDatabases.open(txn)!.commands.delete(txn, key: Array("cmd-early".utf8)) }
        let missing = try requireLedgerError(.integrityFailure) { _ = try legacy.ledger.verify(VerifyOptions(deep: true)) }
        #expect(missing.details["problem"] == "index_missing" && missing.details["index"] == "commands", "\(missing)")
    }

    @Test func unauthenticatedRefusalsWriteNothing() throws {
        let t = try ProofPolicyTests.strictStore(.high)
        let phone = TestDeviceKey(), ricos = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.linkKeyed("ricos", ricos, person: "rico")
        try t.ledger.link("tablet")
        let head = try Self.head(t)
        let review = Command.tap(.review, actionId: "a1", device: "iphone")
        try requireLedgerError(.badProof) { try t.ledger.signed(review, TestDeviceKey()) }
        try requireLedgerError(.badProof) { try t.ledger.signed(review, phone) { $0.actionId = "other" } }
        try requireLedgerError(.proofRequired) { try t.ledger.run(review) }
        try requireLedgerError(.proofRequired) { try t.ledger.run(.tap(.review, actionId: "a1", device: "tablet")) }
        try requireLedgerError(.deviceNotOwned) { try t.ledger.signed(.tap(.review, actionId: "a1", device: "ricos"), ricos) }
        try requireLedgerError(.badProof) { try t.ledger.signed(review, phone, claimedAt: t0.adding(milliseconds: -25 * 3_600_000)) }
        // In a batch, all or nothing: the refused item's record goes with the batch.
        let statement = try t.ledger.statement(for: .tap(.confirm, actionId: "a1", device: "iphone"), commandId: "cmd-b", claimedAt: t0)
        try requireLedgerError(.tapsRequired) {
            try t.ledger.execute(batch: [CommandRequest(.tap(.confirm, actionId: "a1", device: "iphone"), commandId: "cmd-b", now: t0,
                                                        proof: ProofInput(claimedAt: t0, signature: try phone.sign(statement.bytes)))])
        }
        #expect(try Self.head(t) == head)
    }

    @Test func recordedRefusalsAreRateLimitedPerDevice() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "stolen"))
        let start = try Self.head(t)
        for i in 0..<12 {
            try requireLedgerError(.deviceRevoked) {
                try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone, now: t0.adding(milliseconds: Int64(i) * 1000))
            }
        }
        #expect(try Self.head(t) == start + UInt64(RefusalRecorder.perMinute))
        // The next minute records again.
        try requireLedgerError(.deviceRevoked) {
            try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone, now: t0.adding(milliseconds: 60_000))
        }
        #expect(try Self.head(t) == start + UInt64(RefusalRecorder.perMinute) + 1)
        try Self.verifiesEverywhere(t)
    }

    /// The engine records at most ten refusals per device per minute; a log holding an
    /// eleventh (the next minute's, moved back into the first) is one it could not have
    /// written, and replay says so.
    @Test func replayRefusesARefusalPastTheRateLimit() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "stolen"))
        let start = try Self.head(t)
        for i in 0...UInt32(RefusalRecorder.perMinute) {
            // Ten in the first minute, the eleventh a minute later: all recorded.
            let at = i < RefusalRecorder.perMinute ? t0.adding(milliseconds: Int64(i) * 1000) : t0.adding(milliseconds: 60_000)
            try requireLedgerError(.deviceRevoked) { try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone, now: at) }
        }
        let last = start + UInt64(RefusalRecorder.perMinute) + 1
        #expect(try Self.head(t) == last)
        #expect(try t.ledger.replayDecisions().mismatch == nil)
        var events = try t.ledger.read { r in try (1...last).map { try r.event($0)!.event } }
        events[events.count - 1].at = t0.adding(milliseconds: 59_000)
        let copy = try TempLedger()
        try copy.ledger.append(verbatim: events.map { ($0, nil) })
        let m = try copy.ledger.replayDecisions().mismatch
        #expect(m?.rule == "refusal.rate" && m?.seq == last, "\(String(describing: m))")
    }

    /// A re-chained export whose recorded refusal was altered is caught: another code by
    /// replay (the policy gives another refusal), another statement by every proof check.
    @Test func anAlteredRefusalIsCaughtOffline() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "stolen"))
        try requireLedgerError(.deviceRevoked) { try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), phone) }
        let events = try t.ledger.read { r in try (1...5).map { try r.event($0)!.event } }
        func forged(_ change: (inout TapRefusal) -> Void) throws -> TempLedger {
            var copy = events
            guard case .tapRefused(var r) = copy[4].payload else { throw NotTheExpectedError(description: "no refusal") }
            change(&r)
            copy[4].payload = .tapRefused(r)
            let f = try TempLedger()
            try f.ledger.append(verbatim: copy.map { ($0, nil) })
            return f
        }
        let code = try forged { $0.code = "taps_required" }
        #expect(try code.ledger.replayDecisions().mismatch?.rule == "tap.refused")
        let statement = try forged { $0.statement[$0.statement.count - 2] ^= 1 }
        try requireLedgerError(.integrityFailure) { try statement.ledger.verifyProofs() }
        #expect(try statement.ledger.replayDecisions().mismatch?.seq == 5)
        let py = try statement.exportAndVerifyIndependently().python
        #expect(py.status == 1 && py.stdout.hasPrefix("seq 5: refusal"), "\(py.stdout)\(py.stderr)")
    }
}
