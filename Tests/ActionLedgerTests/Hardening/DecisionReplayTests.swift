import Foundation
import Testing
@testable import ActionLedger

/// Issue 11 §1–§2: `audit replay` re-judges every decision with the policy in force at its
/// seq, and `import` runs the same judge, refusing a re-chained export that smuggles in a
/// decision the engine could never have appended.
@Suite struct DecisionReplayTests {
    /// Quinn's high-stakes post waiting for review; Mia's phone linked under another person.
    static func store() throws -> TempLedger {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        try l.link("laptop", platform: .web)
        try l.link("mia-phone", person: "mia")
        try l.run(.propose(proposal("hi", stakes: .high, confidence: 0.9)), now: t0.adding(milliseconds: 1000))
        try l.run(.propose(proposal("lo", stakes: .low, confidence: 0.95)), now: t0.adding(milliseconds: 2000))
        try l.run(.propose(proposal("med", stakes: .medium)), now: t0.adding(milliseconds: 3000))
        try l.run(.tap(.review, actionId: "med", device: "iphone"), now: t0.adding(milliseconds: 4000))
        try l.run(.tap(.approve, actionId: "med", device: "laptop"), now: t0.adding(milliseconds: 5000))
        return t
    }

    /// An export of `t` with `forged` appended, chained as anyone can chain it.
    static func exportWithForgery(_ t: TempLedger, _ forged: (UInt64) -> Event) throws -> String {
        try withoutActuallyEscaping(forged) { try exportRewriting(t, appending: $0) }
    }

    /// An export of `t` with each event passed through `rewrite` (and `appending` added),
    /// re-chained as anyone can chain it.
    static func exportRewriting(_ t: TempLedger, _ rewrite: (Event) -> Event = { $0 },
                                appending: ((UInt64) -> Event)? = nil) throws -> String {
        var lines: [String] = []
        var prev = Digest.zero
        var last: UInt64 = 0
        func add(_ e: Event) {
            let hash = EventCodec.encode(e).withUnsafeBytes { Digest.sha256(prev, $0) }
            prev = hash
            lines.append(StoredEvent(event: e, hash: hash).json.serialized())
            last = e.seq
        }
        try t.ledger.read { r in try r.forEach { add(rewrite($0.event)); return true } }
        if let appending { add(appending(last + 1)) }
        let path = t.directory.appendingPathComponent("forged.jsonl").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func forgedApproval(_ seq: UInt64, action: String = "hi", device: String = "mia-phone") -> Event {
        let content = proposal(action, stakes: .high).proposal.contentHash
        return Event(seq: seq, at: t0.adding(milliseconds: 9000), actor: "quinn", device: device, commandId: "cmd-forged",
                     org: "quinn-co", person: "quinn", actionId: action,
                     payload: .approved(Approval(contentHash: content, policyVersion: 0, rule: Policy.Rule.highThreeTaps,
                                                 stakes: .high, userVerified: true, rulesVersion: Policy.rulesVersion)))
    }

    @Test func anHonestStoreReplaysClean() throws {
        let t = try Self.store()
        let report = try t.ledger.replayDecisions()
        #expect(report.mismatch == nil)
        #expect(report.eventsJudged == 9)
        #expect(report.decisionsConfirmed == 2)
        #expect(report.byRule == [Policy.Rule.autoShip: 1, Policy.Rule.mediumTwoTaps: 1])
        // --from judges only the tail, folding the prefix: from any seq, an honest store
        // replays clean (a folded auto-ship used to stay expected, and uncounted for its day).
        #expect(try t.ledger.replayDecisions(from: 8).eventsJudged == 2)
        for from in UInt64(1)...10 {
            let r = try t.ledger.replayDecisions(from: from)
            #expect(r.mismatch == nil && r.eventsJudged == 10 - from, "from \(from): \(String(describing: r.mismatch))")
        }
    }

    @Test func importRefusesAReChainedHighStakesApprovalFromAnotherPersonsDevice() throws {
        let source = try Self.store()
        let path = try Self.exportWithForgery(source) { Self.forgedApproval($0) }
        let target = try TempLedger()
        let e = expectLedgerError(.replayMismatch) { try target.ledger.importJSONL(path: path) }
        #expect(e?.details["seq"] == .number(10))
        #expect(e?.details["line"] == .number(10))
        #expect(e?.details["rule"] == .string(Policy.Rule.highThreeTaps))
        #expect(e?.details["refusal"] == .string("device_not_owned"))
        #expect(try target.ledger.read { try $0.head().seq } == 0)
        // From Quinn's own device, still without review and confirm: taps_required.
        let own = try Self.exportWithForgery(source) { Self.forgedApproval($0, device: "iphone") }
        let e2 = expectLedgerError(.replayMismatch) { try target.ledger.importJSONL(path: own) }
        #expect(e2?.details["refusal"] == .string("taps_required"))
        // The honest export imports.
        let honest = try Self.exportWithForgery(source) { seq in
            Event(seq: seq, at: t0.adding(milliseconds: 9000), actor: "quinn", device: "iphone", commandId: "cmd-rev",
                  org: "quinn-co", person: "quinn", actionId: "hi",
                  payload: .reviewed(Tap(contentHash: proposal("hi", stakes: .high).proposal.contentHash, policyVersion: 0,
                                         rulesVersion: Policy.rulesVersion)))
        }
        #expect(try target.ledger.importJSONL(path: honest).seq == 10)
    }

    @Test func replayNamesASecondDecisionSmuggledIntoTheStore() throws {
        let t = try Self.store()
        // A second approval of `med`, appended verbatim (as a hand-edited store would hold it).
        let content = proposal("med").proposal.contentHash
        let second = Event(seq: 10, at: t0.adding(milliseconds: 9000), actor: "quinn", device: "iphone", commandId: "cmd-2nd",
                           org: "quinn-co", person: "quinn", actionId: "med",
                           payload: .approved(Approval(contentHash: content, policyVersion: 0, rule: Policy.Rule.mediumTwoTaps,
                                                       stakes: .medium, userVerified: false, rulesVersion: Policy.rulesVersion)))
        try t.ledger.append(verbatim: [(second, nil)])
        let report = try t.ledger.replayDecisions()
        #expect(report.mismatch?.seq == 10)
        #expect(report.mismatch?.rule == Policy.Rule.mediumTwoTaps)
        #expect(report.mismatch?.code == "already_decided")
        #expect(report.decisionsConfirmed == 2)
    }

    /// A decision claiming rules version 1 on an action proposed (and pinned) under rules
    /// version 2: judged under version 1 it would escape the pinned stakes, here a one-tap
    /// approval of an action pinned high once the raise that pinned it was dropped.
    @Test func replayRefusesADecisionUnderOlderRulesThanItsProposal() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        try l.run(.setPolicy(PolicyDocument(raise: [.init(kind: "publish_post", stakes: .high)]), org: "quinn-co"))
        try l.run(.propose(proposal("pv1", stakes: .low, confidence: 0.1)))
        #expect(try l.read { try $0.actionState("pv1") }?.proposal.pinned?.stakes == .high)
        try l.run(.setPolicy(PolicyDocument(raise: []), org: "quinn-co"))
        let head = try l.read { try $0.head().seq }
        let downgraded = Event(seq: head + 1, at: t0, actor: "quinn", device: "iphone", commandId: "cmd-v1", org: "quinn-co",
                               person: "quinn", actionId: "pv1",
                               payload: .approved(Approval(contentHash: proposal("pv1", stakes: .low).proposal.contentHash,
                                                           policyVersion: 2, rule: Policy.Rule.lowOneTap, stakes: .low,
                                                           userVerified: false, rulesVersion: 1)))
        try l.append(verbatim: [(downgraded, nil)])
        let m = try l.replayDecisions().mismatch
        #expect(m?.seq == head + 1 && m?.rule == Policy.Rule.lowOneTap, "\(String(describing: m))")
        #expect(m?.message.contains("older than the rules version 2") == true, "\(String(describing: m))")
    }

    /// Who the engine records: her dismissals, edits and holds are hers; an outcome names
    /// no device; an expiry is the policy's. A re-chained event naming anyone else is one
    /// the engine could not have appended.
    @Test func replayRefusesAChangeRecordedUnderAnotherActor() throws {
        let forgeries: [(String, Event)] = [
            ("dismiss", Event(seq: 10, at: t0.adding(milliseconds: 9000), actor: "bob", device: "laptop", commandId: "cmd-x",
                              org: "quinn-co", person: "quinn", actionId: "hi",
                              payload: .dismissed(Dismissal(reason: "x", policyVersion: 0, rulesVersion: Policy.rulesVersion)))),
            ("hold", Event(seq: 10, at: t0.adding(milliseconds: 9000), actor: "operator", device: "laptop", commandId: "cmd-x",
                           org: "quinn-co", person: "quinn", actionId: "hi",
                           payload: .held(Hold(until: t0.adding(milliseconds: 99_000))))),
            ("outcome", Event(seq: 10, at: t0.adding(milliseconds: 9000), actor: "operator", device: "laptop", commandId: "cmd-x",
                              org: "quinn-co", person: "quinn", actionId: "med", payload: .executed(Outcome(outcome: "{}")))),
        ]
        for (what, forged) in forgeries {
            let t = try Self.store()
            try t.ledger.append(verbatim: [(forged, nil)])
            let m = try t.ledger.replayDecisions().mismatch
            #expect(m?.seq == 10, "\(what): \(String(describing: m))")
        }
        // A store.created that names a device and another org: not what `init` writes.
        let created = Event(seq: 1, at: t0, actor: "mallory", device: "laptop", commandId: "cmd-init", org: "qs", person: "mallory",
                            payload: .storeCreated(StoreCreation(testClock: false, demo: false)))
        let t = try TempLedger()
        try t.ledger.append(verbatim: [(created, nil)])
        #expect(try t.ledger.replayDecisions().mismatch?.rule == "store.created")
    }

    /// Envelopes no command writes, re-chained into an export: a device on a proposal, an
    /// auto-ship, a policy, a token or the relying party (it would list them in that device's
    /// audit), and a person on an operator's event other than its actor (in her activity).
    @Test func importRefusesAnEnvelopeTheEngineNeverWrites() throws {
        let source = try Self.store(), l = source.ledger!
        try l.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co"), now: t0.adding(milliseconds: 6000))
        let token = try l.issueToken(org: "quinn-co", scope: .auditor, subject: nil, expiresAt: t0.adding(milliseconds: 86_400_000),
                                     now: t0.adding(milliseconds: 7000))
        try l.revokeToken(token.record.tokenId, now: t0.adding(milliseconds: 7500))
        try l.run(.hold(actionId: "hi", device: "iphone", until: t0.adding(milliseconds: 3_600_000)), now: t0.adding(milliseconds: 7800))
        try l.run(.setRelyingParty(try RelyingParty(rpId: "ledger.example.com", origins: ["https://ledger.example.com"])),
                  now: t0.adding(milliseconds: 8000))
        let events = try l.read { r in try r.actionEvents("lo").map(\.event) }
        let log = try l.read { r in var all: [Event] = []; try r.forEach { all.append($0.event); return true }; return all }
        func seq(_ type: EventType) throws -> UInt64 { try #require(log.last { $0.type == type }).seq }
        let cases: [(UInt64, String, (inout Event) -> Void)] = [
            (events[0].seq, "action.propose", { $0.device = "iphone" }),
            (events[1].seq, Policy.Rule.autoShip, { $0.device = "ghost" }),
            (try seq(.policySet), "operator.envelope", { $0.device = "laptop" }),
            (try seq(.policySet), "operator.envelope", { $0.person = "quinn" }),
            (try seq(.tokenIssued), "operator.envelope", { $0.device = "laptop" }),
            (try seq(.storeRelyingParty), "operator.envelope", { $0.org = "quinn-co" }),
            (try seq(.tokenRevoked), "operator.envelope", { $0.org = "other-co" }),

        ]
        for (target, rule, change) in cases {
            let path = try Self.exportRewriting(source) { e in
                guard e.seq == target else { return e }
                var forged = e
                change(&forged)
                return forged
            }
            let into = try TempLedger()
            let e = expectLedgerError(.replayMismatch) { try into.ledger.importJSONL(path: path) }
            #expect(e?.details["seq"] == .number(Double(target)) && e?.details["rule"] == .string(rule), "\(rule): \(String(describing: e))")
        }
        // Unchanged, the same export imports and replays clean.
        let into = try TempLedger()
        #expect(try into.ledger.importJSONL(path: try Self.exportRewriting(source)).seq == log.last!.seq)
        #expect(try into.ledger.replayDecisions().mismatch == nil)
    }

    @Test func replayNamesAnAutoShipThePolicyWouldNotMake() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.run(.propose(proposal("m", stakes: .medium, confidence: 0.99)))
        let ship = Event(seq: 2, at: t0, actor: Event.systemPolicyActor, commandId: "cmd-ship", org: "quinn-co", person: "quinn",
                         actionId: "m", payload: .autoShipped(AutoShip(contentHash: proposal("m").proposal.contentHash,
                                                                     policyVersion: 0, rule: Policy.Rule.autoShip, confidence: 0.99)))
        try l.append(verbatim: [(ship, nil)])
        let m = try l.replayDecisions().mismatch
        #expect(m?.seq == 2 && m?.rule == Policy.Rule.autoShip)
    }

    /// A command's events share one time (events.md, envelope `at`). An auto-ship re-chained
    /// after its proposal (a day, at the log's end) would move into another 24-hour audit window.
    @Test func importRefusesAnAutoShipDatedAfterItsProposal() throws {
        let source = try Self.store()
        let ship = try #require(try source.ledger.read { r in try r.actionEvents("lo").last?.event })
        #expect(ship.type == .actionAutoShipped)
        let path = try Self.exportRewriting(source) { e in
            guard e.seq == ship.seq else { return e }
            var later = e
            later.at = e.at.adding(milliseconds: 500)  // still before the next event
            return later
        }
        let target = try TempLedger()
        let e = expectLedgerError(.replayMismatch) { try target.ledger.importJSONL(path: path) }
        #expect(e?.details["seq"] == .number(Double(ship.seq)))
        #expect(e?.details["rule"] == .string("command.unique"))
        #expect(try target.ledger.read { try $0.head().seq } == 0)
        // Unchanged, the same export imports.
        #expect(try target.ledger.importJSONL(path: try Self.exportRewriting(source)).seq == source.ledger.read { try $0.head().seq })
    }

    @Test func theCLIRefusesAForgedImportLeavingNothingBehindAndReplaysTheDemo() throws {
        let f = try ProcessFixture("replay")
        let source = try Self.store()
        let forged = try Self.exportWithForgery(source) { Self.forgedApproval($0) }
        let target = f.path("restored.lmdb")
        let out = try f.ledger(["import", forged], db: target)
        #expect(out.status == LedgerError.Code.replayMismatch.exitStatus, "\(out.stderr)")
        #expect(out.stderr.contains("line 10") && out.stderr.contains(Policy.Rule.highThreeTaps))
        let left = try FileManager.default.contentsOfDirectory(atPath: f.dir.path).filter { $0.hasPrefix("restored") }
        #expect(left.isEmpty, "left behind: \(left)")

        let demo = f.path("demo.lmdb")
        #expect(try f.ledger(["demo"], db: demo).status == 0)
        let replay = try f.ledger(["audit", "replay", "--json"], db: demo)
        #expect(replay.status == 0, "\(replay.stderr)")
        let json = try JSONParser.parse(replay.stdout)
        #expect(json["ok"] == true)
        guard case .number(let n)? = json["decisions_confirmed"] else { Issue.record("no count"); return }
        #expect(n > 20)
    }
}
