import Crypto
import Foundation
import Testing
@testable import ActionLedger

/// WebAuthn signature counters (Specs/statements.md §2.5): a counter that does not rise is
/// refused as `bad_proof` (`sign_count`), in the engine and in every offline checker.
@Suite struct SignCountTests {
    static let review = Command.tap(.review, actionId: "a1", device: "iphone")
    static let approve = Command.tap(.approve, actionId: "a1", device: "iphone")

    static func record(_ t: TempLedger, _ auth: SoftwareAuthenticator) throws -> (count: UInt32, seq: UInt64)? {
        try t.ledger.read { try $0.signCount(auth.key.key().fingerprint) }
    }

    static func counter(of t: TempLedger, seq: UInt64) throws -> UInt32? {
        try t.ledger.read { r in try r.event(seq).flatMap { SignCount.assertion($0.event.payload)?.1.signCount } }
    }

    @Test func aRisingCounterIsAcceptedAndKeptPerKey() throws {
        let (t, auth) = try WebAuthnTests.store(.medium)
        let r = try t.ledger.webauthn(Self.review, auth)
        let a = try t.ledger.webauthn(Self.approve, auth)
        #expect(try Self.counter(of: t, seq: r.events[0].seq) == 1 && Self.counter(of: t, seq: a.events[0].seq) == 2)
        #expect(try Self.record(t, auth)! == (2, a.events[0].seq))
        try TapRefusedTests.verifiesEverywhere(t)
    }

    @Test func anEqualOrLowerCounterIsRefusedAndWritesNothing() throws {
        let (t, auth) = try WebAuthnTests.store(.medium)
        var fixed = auth
        fixed.fixedCount = 5
        try t.ledger.webauthn(Self.review, fixed)
        let head = try TapRefusedTests.head(t)
        for count: UInt32 in [5, 4, 0] {
            fixed.fixedCount = count
            let e = try requireLedgerError(.badProof, "counter \(count)") { try t.ledger.webauthn(Self.approve, fixed) }
            #expect(e.details["problem"] == "sign_count" && e.details["device"] == "iphone", "\(e)")
            #expect(e.message.contains("signature counter is \(count), not greater than 5"), "\(e.message)")
        }
        #expect(try TapRefusedTests.head(t) == head)
        fixed.fixedCount = 6
        #expect(try t.ledger.webauthn(Self.approve, fixed).action?.status == .approved)
        try TapRefusedTests.verifiesEverywhere(t)
    }

    /// WebAuthn §6.1.1: an authenticator that does not count sends 0 every time.
    @Test func zeroIsAcceptedFromAnAuthenticatorThatNeverCounted() throws {
        let (t, auth) = try WebAuthnTests.store(.medium)
        var still = auth
        still.fixedCount = 0
        try t.ledger.webauthn(Self.review, still)
        #expect(try t.ledger.webauthn(Self.approve, still).action?.status == .approved)
        #expect(try Self.record(t, auth) == nil)
        try TapRefusedTests.verifiesEverywhere(t)
    }

    /// A recorded refusal is an authenticated assertion: it moves the counter, and a
    /// refusal whose counter does not rise is not recorded.
    @Test func aRecordedRefusalMovesTheCounter() throws {
        let (t, auth) = try WebAuthnTests.store(.medium)
        let refused = try requireLedgerError(.tapsRequired) { try t.ledger.webauthn(Self.approve, auth) }
        #expect(refused.details["recorded_seq"] != nil)
        #expect(try Self.record(t, auth)?.count == 1)
        var clone = auth
        clone.fixedCount = 1
        let e = try requireLedgerError(.badProof) { try t.ledger.webauthn(Self.review, clone) }
        #expect(e.details["problem"] == "sign_count")
        // A revoked device's valid signature is recorded only when its counter rises.
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "cloned"))
        let head = try TapRefusedTests.head(t)
        let stale = try requireLedgerError(.deviceRevoked) { try t.ledger.webauthn(Self.review, clone) }
        #expect(stale.details["recorded_seq"] == nil)
        #expect(try TapRefusedTests.head(t) == head)
        let genuine = try requireLedgerError(.deviceRevoked) { try t.ledger.webauthn(Self.review, auth) }
        #expect(genuine.details["recorded_seq"] != nil)
        #expect(try Self.record(t, auth)?.count == 2)
        try TapRefusedTests.verifiesEverywhere(t)
    }

    /// Two assertions of one counter in one group commit: the second is judged against
    /// the first, which the same transaction recorded.
    @Test func oneGroupJudgesEachAgainstTheOneBefore() throws {
        let (t, auth) = try WebAuthnTests.store(.medium)
        var fixed = auth
        fixed.fixedCount = 3
        let reviewId = CommandRequest.newCommandId(), approveId = CommandRequest.newCommandId()
        let first = try t.ledger.statement(for: Self.review, commandId: reviewId, claimedAt: t0)
        let second = try t.ledger.statement(for: Self.approve, commandId: approveId, claimedAt: t0)
        let results = try t.ledger.execute(group: [
            CommandRequest(Self.review, commandId: reviewId, now: t0, proof: try fixed.proof(first.bytes, claimedAt: t0)),
            CommandRequest(Self.approve, commandId: approveId, now: t0, proof: try fixed.proof(second.bytes, claimedAt: t0)),
        ])
        #expect((try? results[0].get()) != nil)
        guard case .failure(let e) = results[1] else { Issue.record("the equal counter was accepted"); return }
        #expect(e.code == .badProof && e.details["problem"] == "sign_count")
    }

    /// A new key is a new credential: its counter starts afresh.
    @Test func aRotatedKeyCountsAfresh() throws {
        let (t, auth) = try WebAuthnTests.store(.medium)
        var old = auth
        old.fixedCount = 900
        try t.ledger.webauthn(Self.review, old)
        let next = SoftwareAuthenticator()
        try t.ledger.rotate("iphone", to: next.key, signer: ("iphone", auth.key))
        #expect(try t.ledger.webauthn(Self.approve, next).action?.status == .approved)
        #expect(try Self.record(t, next)?.count == 1 && Self.record(t, auth)?.count == 900)
        try TapRefusedTests.verifiesEverywhere(t)
    }
}

extension SignCountTests {
    /// A clone's assertion with a counter that does not rise, validly signed (the clone
    /// holds the key) and re-chained into an export, as an engine without the check would
    /// have written it: every offline checker refuses it.
    @Test func aClonesStaleCounterIsCaughtOffline() throws {
        let (t, auth) = try WebAuthnTests.store(.medium)
        var clone = auth
        clone.fixedCount = 4
        try t.ledger.webauthn(Self.review, clone)
        clone.fixedCount = 5
        try t.ledger.webauthn(Self.approve, clone)
        var events = try t.ledger.read { r in try (1...(try r.head().seq)).map { try r.event($0)!.event } }
        let last = events.count - 1
        guard case .approved(var a) = events[last].payload, var p = a.proof,
              let storeId = try t.ledger.read({ try $0.storeId() }),
              let statement = RecordedProof.statement(events[last], p, storeId: storeId) else { Issue.record("no proof"); return }
        clone.fixedCount = 4
        let assertion = try clone.assert(statement.bytes)
        p.webauthn = WebAuthnAssertion(authenticatorData: assertion.authenticatorData, clientDataJSON: assertion.clientDataJSON)
        p.signature = try #require(P256Signature.normalize(assertion.der))
        a.proof = p
        events[last].payload = .approved(a)
        let f = try TempLedger()
        try f.ledger.append(verbatim: events.map { ($0, nil) })
        let e = try requireLedgerError(.integrityFailure) { try f.ledger.verifyProofs() }
        #expect(e.details["problem"] == "sign_count" && e.details["seq"] == .number(Double(last + 1)), "\(e)")
        let mismatch = try f.ledger.replayDecisions().mismatch
        #expect(mismatch?.seq == UInt64(last + 1) && mismatch?.rule == "proof" && mismatch?.code == "bad_proof")
        let (path, py) = try f.exportAndVerifyIndependently()
        #expect(py.status == 1 && py.stdout.hasPrefix("seq \(last + 1): webauthn sign_count"), "\(py.stdout)\(py.stderr)")
        let export = try requireLedgerError(.integrityFailure) { try ExportVerifier.verify(path: path) }
        #expect(export.details["problem"] == "sign_count")
        // import verifies the file first: the line is refused before anything is replayed.
        let fresh = try TempLedger()
        let imported = try requireLedgerError(.invalidInput) { try fresh.ledger.importJSONL(path: path) }
        #expect(imported.details["line"] == .number(Double(last + 1)), "\(imported)")
    }

    /// The engine judges by `meta`'s `sign_count/KEY`: `verify --deep` rederives it, and a
    /// store written before it gets it from `ledger migrate` (layout 3).
    @Test func theCounterRecordIsAnIndexRecord() throws {
        let (t, auth) = try WebAuthnTests.store(.medium)
        var fixed = auth
        fixed.fixedCount = 7
        try t.ledger.webauthn(Self.review, fixed)
        let key = MetaKey.signCount(try auth.key.key().fingerprint)
        func meta(_ body: (LogIndex, Transaction) throws -> Void) throws {
            try t.ledger.environment.write { txn in try body(LogDatabases.open(txn)!.meta, txn) }
        }
        try meta { m, txn in try m.put(txn, key: key, value: LogReader.signCountRecord(2, seq: 5)) }
        let e = try requireLedgerError(.integrityFailure) { try t.ledger.verifyProofs() }
        #expect(e.details["problem"] == "index_mismatch" && e.details["index"] == "meta", "\(e)")
        // As a layout-2 store holds it: no record, and writes wait for the migration.
        try meta { m, txn in
            _ = try m.delete(txn, key: key)
            try m.put(txn, key: MetaLayout.key, value: [2])
        }
        try t.migrate()
        #expect(try Self.record(t, auth)?.count == 7)
        fixed.fixedCount = 7
        let refused = try requireLedgerError(.badProof) { try t.ledger.webauthn(Self.approve, fixed) }
        #expect(refused.details["problem"] == "sign_count")
        _ = try t.ledger.verifyProofs()
    }
}
