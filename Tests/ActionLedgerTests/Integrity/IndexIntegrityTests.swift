import Foundation
import Testing
@testable import ActionLedger

/// `verify --deep` rederives every `log_index` entry from the log, and the command path
/// refuses an index entry that disagrees with the event it points to.
@Suite struct IndexIntegrityTests {
    typealias F = IntegrityFixtures

    func populated() throws -> TempLedger {
        let t = try TempLedger()
        try F.populate(t.ledger)
        #expect(F.failure(t.ledger, VerifyOptions(deep: true)) == nil)
        return t
    }

    /// Replaces index entry `key` by `newKey` (a flipped bit in a stored key), keeping its value.
    func move(_ l: Ledger, _ index: KeyPath<LogDatabases, LogIndex>, _ key: [UInt8], to newKey: [UInt8]) throws {
        try l.environment.write { txn in
            let idx = try LogDatabases.open(txn)![keyPath: index]
            let value = try idx.get(txn, key: key)!
            #expect(try idx.delete(txn, key: key))
            try idx.put(txn, key: newKey, value: value)
        }
    }

    func put(_ l: Ledger, _ index: KeyPath<LogDatabases, LogIndex>, _ key: [UInt8], _ value: [UInt8]) throws {
        try l.environment.write { txn in try LogDatabases.open(txn)![keyPath: index].put(txn, key: key, value: value) }
    }

    func approvalSeq(_ l: Ledger) throws -> UInt64 { try ContentHashTests.seq(l, "a1", .actionApproved) }

    @Test func aFlippedSeqBitInAnActionSeqsKeyStopsTheCommandPath() throws {
        let t = try populated()
        let l = t.ledger!
        let s = try approvalSeq(l)
        // A single bit flip in the seq part that lands on another action's event.
        let flipped = try (0..<6).map { s ^ (1 << $0) }.first { n in
            try l.read { try $0.event(n) }.map { $0.event.actionId != "a1" } ?? false
        }!
        try move(l, \.actionSeqs, Keys.composite("a1", s), to: Keys.composite("a1", flipped))
        for attempt in [{ _ = try l.read { try $0.actionState("a1") } },
                        { _ = try l.run(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "again-1") }] {
            #expect {
                try attempt()
            } throws: { e in
                let e = e as? LedgerError
                return e?.code == .corruptEvent && e?.details["index"] == "action_seqs" && e?.details["key"] == "a1"
                    && e?.details["seq"] == .number(Double(flipped)) && e?.message.contains("seq \(flipped)") == true
            }
        }
        let e = F.failure(l, VerifyOptions(deep: true))
        #expect(e?.code == .integrityFailure)
        #expect(e?.details["index"] == "action_seqs")
        #expect(F.seq(of: e) == s)  // the approval's own entry is the first that differs
    }

    @Test func aFlippedIdBitInAnActionSeqsKeyIsNamedByDeepVerify() throws {
        let t = try populated()
        let l = t.ledger!
        let s = try approvalSeq(l)
        // "a1" → "a0": a1 would look undecided.
        try move(l, \.actionSeqs, Keys.composite("a1", s), to: Keys.composite("a0", s))
        #expect(F.failure(l) == nil)  // the chain is intact: only --deep reads the index
        let e = F.failure(l, VerifyOptions(deep: true))
        #expect(e?.code == .integrityFailure)
        #expect(e?.details["problem"] == "index_missing")
        #expect(e?.details["index"] == "action_seqs")
        #expect(e?.details["key"] == .string("a1 ‖ \(s)"))
        #expect(F.seq(of: e) == s)
        // The stray entry cannot be read as an action either.
        #expect { _ = try l.read { try $0.actionState("a0") } } throws: { ($0 as? LedgerError)?.code == .corruptEvent }
    }

    @Test func aDeviceSeqsEntryPointingElsewhereIsRefusedAndNamed() throws {
        let t = try populated()
        let l = t.ledger!
        // iphone was linked at seq 1; point its entry at laptop's link (seq 2).
        try move(l, \.deviceSeqs, Keys.composite("iphone", 1), to: Keys.composite("iphone", 2))
        #expect {
            _ = try l.run(.tap(.review, actionId: "a3", device: "iphone"), commandId: "dev-1")
        } throws: { e in
            let e = e as? LedgerError
            return e?.code == .corruptEvent && e?.details["index"] == "device_seqs" && e?.details["seq"] == 2
        }
        let e = F.failure(l, VerifyOptions(deep: true))
        #expect(e?.details["index"] == "device_seqs")
        #expect(F.seq(of: e) == 1)
    }

    @Test func theCommandsRangeAndPolicyPointerAreRederived() throws {
        let t = try populated()
        let l = t.ledger!
        // The auto-ship proposal appended two events under one command id.
        let cmd = try l.read { try $0.event(ContentHashTests.seq(l, "a3", .actionProposed))!.event.commandId }
        let (first, count) = try l.read { try $0.command(cmd)! }
        #expect(count == 2)
        try put(l, \.commands, Array(cmd.utf8), Keys.u64(first) + [0, 0, 0, 1])
        var e = F.failure(l, VerifyOptions(deep: true))
        #expect(e?.details["index"] == "commands")
        #expect(e?.details["key"] == .string(cmd))
        #expect(F.seq(of: e) == first + 1)
        try put(l, \.commands, Array(cmd.utf8), Keys.u64(first) + [0, 0, 0, 3])
        e = F.failure(l, VerifyOptions(deep: true))
        #expect(e?.details["problem"] == "index_mismatch")
        #expect(F.seq(of: e) == first + 2)
        try put(l, \.commands, Array(cmd.utf8), Keys.u64(first) + [0, 0, 0, 2])
        #expect(F.failure(l, VerifyOptions(deep: true)) == nil)
        // The policy pointer must name the last policy.set (seq 5).
        try put(l, \.meta, MetaKey.policy, Keys.u64(6))
        #expect { _ = try l.read { try $0.policy() } } throws: { ($0 as? LedgerError)?.code == .corruptEvent }
        e = F.failure(l, VerifyOptions(deep: true))
        #expect(e?.details["index"] == "meta")
        #expect(e?.details["key"] == "policy")
    }

    @Test func autoShipDayCountsAreRecountedInBoundedChunks() throws {
        let t = try populated()
        let l = t.ledger!
        try l.run(.propose(proposal("b1", person: "ava", stakes: .low, confidence: 0.95)))
        try l.run(.propose(proposal("b2", person: "ava", stakes: .low, confidence: 0.95)), now: t0.adding(milliseconds: Timestamp.day))
        let ship = try ContentHashTests.seq(l, "b2", .actionAutoShipped)
        let key = Keys.composite("ava", UInt64(t0.adding(milliseconds: Timestamp.day).utcDay))
        #expect(try l.read { r in try r.autoShipped(person: "ava", day: t0.utcDay + 1) } == 1)
        // A count shifted from one day to another keeps the total but not the entries.
        try put(l, \.autoShipDays, key, Keys.u64(0))
        try put(l, \.autoShipDays, Keys.composite("ava", UInt64(t0.utcDay)), Keys.u64(2))
        for chunk in [1, 2, 1 << 16] {
            do {
                try l.read { try IndexVerifier(reader: $0, chunk: chunk).run() }
                Issue.record("chunk \(chunk): the shifted count passed")
            } catch let e as LedgerError {
                #expect(e.details["index"] == "autoship_days")
                #expect(e.details["key"] == .string("ava ‖ \(t0.utcDay)"), "chunk \(chunk)")
            }
        }
        try put(l, \.autoShipDays, key, Keys.u64(1))
        try put(l, \.autoShipDays, Keys.composite("ava", UInt64(t0.utcDay)), Keys.u64(1))
        for chunk in [1, 2] { try l.read { try IndexVerifier(reader: $0, chunk: chunk).run() } }
        // A deleted entry is named by the auto-ship that implies it.
        try l.environment.write { txn in _ = try LogDatabases.open(txn)!.autoShipDays.delete(txn, key: key) }
        let e = F.failure(l, VerifyOptions(deep: true))
        #expect(e?.details["problem"] == "index_missing")
        #expect(F.seq(of: e) == ship)
    }
}
