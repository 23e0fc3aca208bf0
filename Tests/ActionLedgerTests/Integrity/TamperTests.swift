import Foundation
import Testing
@testable import ActionLedger

/// Tamper evidence: every change to a stored event is caught and named by its seq.
@Suite struct TamperTests {
    typealias F = IntegrityFixtures

    func populated() throws -> TempLedger {
        let t = try TempLedger()
        try F.populate(t.ledger)
        #expect(F.failure(t.ledger) == nil)
        return t
    }

    @Test func flippingABitInAnyByteOfAnyEventIsCaughtAtThatSeq() throws {
        let t = try populated()
        let l = t.ledger!
        let head = try l.read { try $0.head() }
        #expect(head.seq >= 14)
        var flips = 0
        for seq in 1...head.seq {
            let original = try F.raw(l, seq)
            for offset in 0..<original.count {
                var damaged = original
                damaged[offset] ^= UInt8(1) << UInt8((offset + Int(seq)) % 8)
                try F.tamper(l) { txn, events, _ in try txn.put(events, key: Keys.u64(seq), value: damaged) }
                let e = F.failure(l)
                #expect(e?.code == .integrityFailure, "seq \(seq) byte \(offset) not caught")
                #expect(F.seq(of: e) == seq, "seq \(seq) byte \(offset): blamed \(e?.message ?? "nothing")")
                // Deep verification catches it at the same seq too.
                #expect(F.seq(of: F.failure(l, VerifyOptions(deep: true))) == seq)
                flips += 1
            }
            try F.tamper(l) { txn, events, _ in try txn.put(events, key: Keys.u64(seq), value: original) }
        }
        #expect(F.failure(l) == nil)
        #expect(flips > 14 * 40)
    }

    @Test func flippingABitInTheHeadRecordIsCaught() throws {
        let t = try populated()
        let l = t.ledger!
        let original = try l.read { r in try r.dbs.head.get(r.txn, key: MetaKey.head)! }
        for offset in 0..<original.count {
            var damaged = original
            damaged[offset] ^= 0x10
            try F.tamper(l) { txn, _, meta in try meta.put(txn, key: MetaKey.head, value: damaged) }
            #expect(F.failure(l)?.code == .integrityFailure, "head byte \(offset)")
        }
    }

    @Test func deletingAnEventNamesTheMissingSeq() throws {
        let t = try populated()
        let l = t.ledger!
        try F.tamper(l) { txn, events, _ in try txn.delete(events, key: Keys.u64(6)) }
        let e = F.failure(l)
        #expect(F.seq(of: e) == 6)
        #expect(e?.details["problem"] == "missing")
        #expect(e?.message.contains("seq 6 is missing") == true)
    }

    @Test func duplicatingAnEventOverTheNextIsCaught() throws {
        let t = try populated()
        let l = t.ledger!
        let five = try F.raw(l, 5)
        try F.tamper(l) { txn, events, _ in try txn.put(events, key: Keys.u64(6), value: five) }
        let e = F.failure(l)
        #expect(F.seq(of: e) == 6)
        #expect(e?.details["problem"] == "seq_mismatch")
    }

    @Test func swappingTwoEventsIsCaughtAtTheFirst() throws {
        let t = try populated()
        let l = t.ledger!
        let (a, b) = (try F.raw(l, 7), try F.raw(l, 8))
        try F.tamper(l) { txn, events, _ in
            try txn.put(events, key: Keys.u64(7), value: b)
            try txn.put(events, key: Keys.u64(8), value: a)
        }
        #expect(F.seq(of: F.failure(l)) == 7)
    }

    @Test func insertingAnEventIsCaught() throws {
        let t = try populated()
        let l = t.ledger!
        let head = try l.read { try $0.head() }
        // Shift events 9… up by one and slot a forged copy of 3 in at 9, hashes untouched.
        try F.tamper(l) { txn, events, _ in
            for seq in stride(from: head.seq, through: 9, by: -1) {
                try txn.put(events, key: Keys.u64(seq + 1), value: try txn.get(events, key: Keys.u64(seq))!)
            }
            try txn.put(events, key: Keys.u64(9), value: try txn.get(events, key: Keys.u64(3))!)
        }
        #expect(F.seq(of: F.failure(l)) == 9)
        // An event appended past the head record is caught too.
        let t2 = try populated()
        let extra = try F.raw(t2.ledger, head.seq)
        try F.tamper(t2.ledger) { txn, events, _ in try txn.put(events, key: Keys.u64(head.seq + 1), value: extra) }
        #expect(F.seq(of: F.failure(t2.ledger)) == head.seq + 1)
    }

    @Test func aRewrittenAndRechainedLogPassesAloneButNotAgainstACheckpoint() throws {
        let t = try populated()
        let l = t.ledger!
        let key = CheckpointSigningKey()
        let cp = try Checkpoint(head: try l.read { try $0.head() }, time: t0, key: key)
        // Rewrite event 7 (a new device) and re-chain everything after it, head record included.
        var forged = try l.read { try $0.event(7) }!.event
        forged.device = "attacker-phone"
        try F.tamper(l) { txn, events, meta in
            try txn.put(events, key: Keys.u64(7), value: Digest.zero.bytes + EventCodec.encode(forged))
            try F.rechain(txn, events, meta, from: 7)
        }
        #expect(F.failure(l) == nil, "a full rewrite is invisible without an outside checkpoint (documented)")
        let e = F.failure(l, VerifyOptions(checkpoint: cp))
        #expect(e?.details["problem"] == "checkpoint_mismatch")
        #expect(F.seq(of: e) == cp.logSize)
    }

    @Test func aTruncatedTailIsCaughtOnlyAgainstACheckpoint() throws {
        let t = try populated()
        let l = t.ledger!
        let head = try l.read { try $0.head() }
        let cp = try Checkpoint(head: head, time: t0, key: CheckpointSigningKey())
        try F.tamper(l) { txn, events, meta in
            for seq in (head.seq - 2)...head.seq { try txn.delete(events, key: Keys.u64(seq)) }
            // A naive truncation leaves the head record behind: caught by it.
        }
        #expect(F.seq(of: F.failure(l)) == head.seq - 2)
        try F.tamper(l) { txn, events, meta in try F.rechain(txn, events, meta, from: head.seq - 3) }
        #expect(F.failure(l) == nil, "a careful truncation is invisible to the store alone (documented)")
        let e = F.failure(l, VerifyOptions(checkpoint: cp))
        #expect(e?.details["problem"] == "truncated_tail")
        #expect(F.seq(of: e) == head.seq - 2)
    }

    @Test func verificationCanStartFromATrustedCheckpoint() throws {
        let t = try populated()
        let l = t.ledger!
        let cp = try Checkpoint(head: try l.read { try $0.head() }, time: t0, key: CheckpointSigningKey())
        try l.link("tablet")
        try l.run(.propose(proposal("a9")))
        let report = try l.verify(VerifyOptions(start: cp))
        #expect(report.firstSeq == cp.logSize + 1)
        #expect(report.checked == 2)
        // Damage before the checkpoint is not re-read; damage after it is caught.
        let after = cp.logSize + 2
        var damaged = try F.raw(l, after)
        damaged[40] ^= 1
        try F.tamper(l) { txn, events, _ in try txn.put(events, key: Keys.u64(after), value: damaged) }
        #expect(F.seq(of: F.failure(l, VerifyOptions(start: cp))) == after)
        // A store whose event at the checkpoint no longer carries its hash is refused at once.
        var atCp = try F.raw(l, cp.logSize)
        atCp[0] ^= 1
        try F.tamper(l) { txn, events, _ in try txn.put(events, key: Keys.u64(cp.logSize), value: atCp) }
        #expect(F.seq(of: F.failure(l, VerifyOptions(start: cp))) == cp.logSize)
    }

    @Test func deepVerificationRefusesNonCanonicalBytesThatStillChain() throws {
        let t = try populated()
        let l = t.ledger!
        // Append a trailing byte to event 4 and re-chain: the hashes hold, the encoding does not.
        try F.tamper(l) { txn, events, meta in
            try txn.put(events, key: Keys.u64(4), value: try txn.get(events, key: Keys.u64(4))! + [0])
            try F.rechain(txn, events, meta, from: 4)
        }
        #expect(F.failure(l) == nil)
        let e = F.failure(l, VerifyOptions(deep: true))
        #expect(F.seq(of: e) == 4)
        #expect(e?.details["problem"] == "undecodable")
    }
}
