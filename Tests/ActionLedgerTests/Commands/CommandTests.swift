import Testing
@testable import ActionLedger

@Suite struct CommandTests {
    func ledger() throws -> TempLedger {
        let t = try TempLedger()
        try t.ledger.link("iphone")
        try t.ledger.link("laptop", platform: .web)
        try t.ledger.link("mias-phone", person: "mia")
        return t
    }

    func code(_ body: () throws -> Void) -> LedgerError.Code? {
        do { try body(); return nil } catch let e as LedgerError { return e.code } catch { return .storage }
    }

    @Test func replayedCommandIdReturnsOriginalAndAppendsNothing() throws {
        let t = try ledger(), l = t.ledger!
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1)))
        let first = try l.run(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "phone-q-1")
        let head = try l.read { try $0.head() }
        let again = try l.run(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "phone-q-1")
        #expect(again.replayed)
        #expect(again.events == first.events)
        #expect(try l.read { try $0.head() } == head)
    }

    @Test func commandIdReusedForAnotherActionIsRefused() throws {
        let t = try ledger(), l = t.ledger!
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1)))
        try l.run(.propose(proposal("a2", stakes: .low, confidence: 0.1)))
        try l.run(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "c1")
        #expect(code { try l.run(.tap(.approve, actionId: "a2", device: "iphone"), commandId: "c1") } == .invalidInput)
    }

    @Test func duplicateTapDoesNotCountTwice() throws {
        let t = try ledger(), l = t.ledger!
        try l.run(.propose(proposal("a1", stakes: .high)))
        try l.run(.tap(.review, actionId: "a1", device: "iphone"))
        let dup = try l.run(.tap(.review, actionId: "a1", device: "laptop"))
        #expect(dup.duplicateTap && dup.events.isEmpty)
        #expect(dup.nextTap == .confirm)
        #expect(try l.read { try $0.actionState("a1")?.taps.count } == 1)
    }

    @Test func editVoidsEarlierTapsAndStaleContentIsRefused() throws {
        let t = try ledger(), l = t.ledger!
        let proposed = try l.run(.propose(proposal("a1", stakes: .medium)))
        let oldHash = try #require(proposed.action?.contentHash)
        try l.run(.tap(.review, actionId: "a1", device: "iphone"))
        try l.run(.edit(actionId: "a1", device: "laptop", text: "better caption"))
        #expect(code { try l.run(.tap(.approve, actionId: "a1", device: "laptop")) } == .tapsRequired)
        #expect(code { try l.run(.tap(.review, actionId: "a1", device: "iphone", seenContent: oldHash)) } == .staleContent)
        try l.run(.tap(.review, actionId: "a1", device: "iphone"))
        let approved = try l.run(.tap(.approve, actionId: "a1", device: "laptop"))
        guard case .approved(let a)? = approved.events.last?.event.payload else { Issue.record("no approval"); return }
        #expect(a.contentHash != oldHash)
        #expect(a.contentHash == EventCodec.contentHash(of: Preview(text: "better caption", assets: 3, price: 9.99)))
    }

    @Test func firstDecisionWinsAndTheConflictNamesTheWinner() throws {
        let t = try ledger(), l = t.ledger!
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1)))
        try l.run(.tap(.approve, actionId: "a1", device: "laptop"), now: at("2026-11-22T09:05:00Z"))
        let e = expectLedgerError(.alreadyDecided) { try l.run(.dismiss(actionId: "a1", device: "iphone", reason: ""), now: at("2026-11-22T09:06:00Z")) }
        #expect(e?.code == .alreadyDecided)
        #expect(e?.details["decided_device"] == .string("laptop"))
        #expect(e?.details["decided_at"] == .string("2026-11-22T09:05:00.000Z"))
        #expect(e?.details["decided_by"] == .string("quinn"))
    }

    @Test func foreignUnknownAndRevokedDevicesAreRefused() throws {
        let t = try ledger(), l = t.ledger!
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1)))
        #expect(code { try l.run(.tap(.approve, actionId: "a1", device: "mias-phone")) } == .deviceNotOwned)
        #expect(code { try l.run(.tap(.approve, actionId: "a1", device: "nope")) } == .unknownDevice)
        try l.run(.revokeDevice(device: "iphone", reason: "lost"))
        #expect(code { try l.run(.tap(.approve, actionId: "a1", device: "iphone")) } == .deviceRevoked)
        #expect(code { try l.link("iphone") } == .duplicateDevice)
        #expect(code { try l.run(.tap(.approve, actionId: "zzz", device: "laptop")) } == .unknownAction)
    }

    @Test func autoShipRespectsFloorCapAndRaisedStakes() throws {
        let t = try ledger(), l = t.ledger!
        try l.run(.setPolicy(PolicyDocument(autoShip: .init(enabled: true, confidenceFloor: 0.8, dailyCap: 2),
                                            raise: [.init(kind: "send_dm", stakes: .medium)]), org: "quinn-co"))
        #expect(try l.run(.propose(proposal("low-sure", stakes: .low, confidence: 0.8))).action?.status == .autoShipped)
        #expect(try l.run(.propose(proposal("low-unsure", stakes: .low, confidence: 0.79))).action?.status == .pending)
        #expect(try l.run(.propose(proposal("dm", stakes: .low, confidence: 0.99, kind: "send_dm"))).action?.status == .pending)
        #expect(try l.run(.propose(proposal("med", stakes: .medium, confidence: 0.99))).action?.status == .pending)
        #expect(try l.run(.propose(proposal("second", stakes: .low, confidence: 0.9))).action?.status == .autoShipped)
        // The cap (2 a day) is reached: the third waits, and the next UTC day ships again.
        #expect(try l.run(.propose(proposal("third", stakes: .low, confidence: 0.9))).action?.status == .pending)
        let tomorrow = try l.run(.propose(proposal("next-day", stakes: .low, confidence: 0.9)), now: at("2026-11-23T00:00:00Z"))
        #expect(tomorrow.action?.status == .autoShipped)
        guard case .autoShipped(let a)? = tomorrow.events.last?.event.payload else { Issue.record("no auto-ship"); return }
        #expect(a.policyVersion == 1 && a.rule == Policy.Rule.autoShip)
        #expect(tomorrow.events.last?.event.actor == Event.systemPolicyActor)
    }

    /// Rules version 2: a policy that drops user verification applies to actions proposed
    /// after it; one already waiting keeps the requirement it was proposed under.
    @Test func highStakesNeedsUserVerificationUnlessPolicySaysOtherwise() throws {
        let t = try ledger(), l = t.ledger!
        try l.run(.propose(proposal("a1", stakes: .high)))
        for step in [TapStep.review, .confirm] { try l.run(.tap(step, actionId: "a1", device: "iphone")) }
        #expect(code { try l.run(.tap(.approve, actionId: "a1", device: "laptop")) } == .userVerificationRequired)
        try l.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co"))
        #expect(code { try l.run(.tap(.approve, actionId: "a1", device: "laptop")) } == .userVerificationRequired)
        try l.run(.propose(proposal("a2", stakes: .high)))
        for step in [TapStep.review, .confirm] { try l.run(.tap(step, actionId: "a2", device: "iphone")) }
        let ok = try l.run(.tap(.approve, actionId: "a2", device: "laptop"))
        #expect(ok.action?.decision?.policyVersion == 1)
        #expect(ok.action?.taps.map(\.device) == ["iphone", "iphone", "laptop"])
        guard case .approved(let a)? = ok.events.last?.event.payload else { Issue.record("no approval"); return }
        #expect(a.rulesVersion == Policy.rulesVersion && ok.events.last?.event.schemaVersion == 2)
    }

    @Test func holdExpiryAndOutcomes() throws {
        let t = try ledger(), l = t.ledger!
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1, expiresAt: at("2026-11-22T12:00:00Z"))))
        let held = try l.run(.hold(actionId: "a1", device: "iphone", until: at("2026-11-22T10:00:00Z")))
        #expect(held.action?.displayState(now: at("2026-11-22T09:30:00Z")) == "held")
        #expect(held.action?.displayState(now: at("2026-11-22T10:00:00Z")) == "pending")
        // Refusals name the field at fault (cli.md, exit 2's details).
        let past = expectLedgerError(.invalidInput) { try l.run(.hold(actionId: "a1", device: "iphone", until: t0)) }
        #expect(past?.details["field"] == .string("until"))
        let same = expectLedgerError(.invalidInput) { try l.run(.edit(actionId: "a1", device: "iphone", text: proposal("a1").proposal.preview.text)) }
        #expect(same?.details["field"] == .string("text"))
        #expect(code { try l.run(.recordOutcome(actionId: "a1", succeeded: true, outcome: [:])) } == .notApproved)
        #expect(code { try l.run(.expire(actionId: "a1")) } == .invalidInput)
        #expect(code { try l.run(.tap(.approve, actionId: "a1", device: "iphone"), now: at("2026-11-22T12:00:00Z")) } == .actionExpired)
        let expired = try l.run(.expire(actionId: "a1"), now: at("2026-11-22T12:00:01Z"))
        #expect(expired.action?.status == .expired)
        let later = at("2026-11-22T12:30:00Z")  // event times never go backwards
        try l.run(.propose(proposal("a2", stakes: .low, confidence: 0.1)), now: later)
        try l.run(.tap(.approve, actionId: "a2", device: "laptop"), now: later)
        let done = try l.run(.recordOutcome(actionId: "a2", succeeded: true, outcome: ["url": "https://x.test"]), now: later)
        guard case .executed(let o)? = done.events.last?.event.payload else { Issue.record("no outcome"); return }
        #expect(try JSONParser.parse(o.outcome)["device"] == .string("laptop"))
    }

    @Test func groupCommitIsolatesRefusalsAndBatchIsAllOrNothing() throws {
        let t = try ledger(), l = t.ledger!
        let results = try l.execute(group: [
            CommandRequest(.propose(proposal("g1")), now: t0),
            CommandRequest(.propose(proposal("g1")), now: t0),
            CommandRequest(.propose(proposal("g2")), now: t0),
        ])
        #expect(results.map { (try? $0.get()) != nil } == [true, false, true])
        let head = try l.read { try $0.head() }
        let e = expectLedgerError(.duplicateAction) {
            try l.execute(batch: [CommandRequest(.propose(proposal("b1")), now: t0),
                                  CommandRequest(.propose(proposal("g2")), now: t0)])
        }
        #expect(e?.code == .duplicateAction && e?.details["index"] == .number(1))
        #expect(try l.read { try $0.head() } == head)
        #expect(try l.read { try $0.actionState("b1") } == nil)
    }

    @Test func policyVersionsMustFollowOneAnother() throws {
        let t = try ledger(), l = t.ledger!
        #expect(code { try l.run(.setPolicy(PolicyDocument(version: 5), org: "o")) } == .invalidInput)
        try l.run(.setPolicy(PolicyDocument(version: 1), org: "o"))
        try l.run(.setPolicy(PolicyDocument(), org: "o"))
        #expect(try l.read { try $0.policy().version } == 2)
    }

    @Test func eventsSurviveReopenWithDenseSeqsAndAChain() throws {
        let t = try ledger()
        try t.ledger.run(.propose(proposal("a1")))
        try t.reopen()
        try t.ledger.run(.tap(.review, actionId: "a1", device: "iphone"))
        var previous = Digest.zero, seqs: [UInt64] = []
        try t.ledger.read { r in
            try r.forEachRaw { seq, value in
                seqs.append(seq)
                let hash = Digest(bytes: UnsafeRawBufferPointer(rebasing: value[0..<32]))!
                #expect(hash == Digest.sha256(previous, UnsafeRawBufferPointer(rebasing: value[32...])))
                previous = hash
                return true
            }
        }
        #expect(seqs == Array(1...5))
    }
}
