import Foundation
import Testing
@testable import ActionLedger

/// Issue 11 §5: the org is a boundary, a newer policy never loosens a pending action, and a
/// used command id answers only its own device and command (rules version 2).
@Suite struct BoundaryTests {
    func store() throws -> TempLedger {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        try l.link("laptop", platform: .web)
        return t
    }

    @Test func aPersonBelongsToOneOrgAndDevicesTakeIt() throws {
        let t = try store(), l = t.ledger!
        // quinn is bound to quinn-co by her first device: evil-co cannot claim her.
        let e = expectLedgerError(.orgMismatch) {
            try l.run(.linkDevice(device: "evil", person: "quinn", org: "evil-co", label: "E", platform: .ios))
        }
        #expect(e?.message.contains("quinn-co") == false)
        expectLedgerError(.orgMismatch) {
            var p = proposal("x1")
            p.org = "evil-co"
            try l.run(.propose(p))
        }
        // No org given: the device takes its person's; a person with none must be given one.
        try l.run(.linkDevice(device: "ipad", person: "quinn", org: "", label: "iPad", platform: .ios))
        #expect(try l.read { try $0.deviceState("ipad")?.org } == "quinn-co")
        expectLedgerError(.invalidInput) { try l.run(.linkDevice(device: "m", person: "mia", org: "", label: "M", platform: .ios)) }
    }

    @Test func anotherOrgsDeviceLearnsNothingOfTheAction() throws {
        let t = try store(), l = t.ledger!
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1)))
        // A device under another org for the same person id, as a store written before
        // orgs were a boundary could hold it.
        let link = Event(seq: 4, at: t0, actor: "operator", commandId: "cmd-evil", org: "evil-co", person: "quinn",
                         payload: .deviceLinked(DeviceLink(device: "evil-phone", label: "E", platform: .ios)))
        try l.append(verbatim: [(link, nil)])
        let e = expectLedgerError(.unknownAction) { try l.run(.tap(.approve, actionId: "a1", device: "evil-phone")) }
        #expect(e?.message == "no action a1")
        #expect(try l.read { try $0.actionState("a1")?.status } == .pending)
        // Revoked, it still learns nothing (policy.md §3: `device.org` before `device.revoked`).
        try l.run(.revokeDevice(device: "evil-phone", reason: "gone"))
        let head = try l.read { try $0.head().seq }
        let revoked = expectLedgerError(.unknownAction) { try l.run(.tap(.review, actionId: "a1", device: "evil-phone")) }
        #expect(revoked?.message == "no action a1" && revoked?.details["revoked_at"] == nil)
        #expect(try l.read { try $0.head().seq } == head)
    }

    @Test func aPolicyGovernsItsOwnOrgOnly() throws {
        let t = try store(), l = t.ledger!
        try l.run(.setPolicy(PolicyDocument(userVerification: []), org: "other-co"))
        #expect(try l.read { try $0.policy(org: "quinn-co").version } == 0)
        #expect(try l.read { try $0.policy(org: "other-co").version } == 1)
        try l.run(.propose(proposal("hi", stakes: .high)))
        for step in [TapStep.review, .confirm] { try l.run(.tap(step, actionId: "hi", device: "iphone")) }
        expectLedgerError(.userVerificationRequired) { try l.run(.tap(.approve, actionId: "hi", device: "laptop")) }
    }

    @Test func aNewerPolicyTightensButNeverLoosensAPendingAction() throws {
        let t = try store(), l = t.ledger!
        try l.run(.setPolicy(PolicyDocument(raise: [.init(kind: "send_dm", stakes: .high)]), org: "quinn-co"))
        try l.run(.propose(proposal("dm", stakes: .low, confidence: 0.1, kind: "send_dm")))
        try l.run(.setPolicy(PolicyDocument(raise: []), org: "quinn-co"))
        // Raised to high when proposed: removing the raise does not make it a one-tap action.
        let e = expectLedgerError(.tapsRequired) { try l.run(.tap(.approve, actionId: "dm", device: "iphone")) }
        #expect(e?.details["next_tap"] == "review")
        // Tightening applies at once.
        try l.run(.propose(proposal("post", stakes: .low, confidence: 0.1)))
        try l.run(.setPolicy(PolicyDocument(raise: [.init(kind: "publish_post", stakes: .medium)]), org: "quinn-co"))
        expectLedgerError(.tapsRequired) { try l.run(.tap(.approve, actionId: "post", device: "iphone")) }
        #expect(try l.replayDecisions().mismatch == nil)
    }

    @Test func aUsedCommandIdAnswersOnlyItsOwnDeviceAndCommand() throws {
        let t = try store(), l = t.ledger!
        try l.link("mias-phone", person: "mia")
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1)))
        let first = try l.run(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "cmd-q")
        // The same device and command: the original result, nothing appended.
        let again = try l.run(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "cmd-q")
        #expect(again.replayed && again.events == first.events)
        // Anyone else gets the refusal they would get without the id.
        expectLedgerError(.unknownDevice) { try l.run(.tap(.approve, actionId: "a1", device: "ghost"), commandId: "cmd-q") }
        expectLedgerError(.deviceNotOwned) { try l.run(.tap(.approve, actionId: "a1", device: "mias-phone"), commandId: "cmd-q") }
        expectLedgerError(.alreadyDecided) { try l.run(.tap(.approve, actionId: "a1", device: "laptop"), commandId: "cmd-q") }
        // Another command that would succeed is refused, never answered with the approval.
        let e = expectLedgerError(.invalidInput) { try l.run(.propose(proposal("a2")), commandId: "cmd-q") }
        #expect(e?.message.contains("already used") == true)
        #expect(try l.read { try $0.actionState("a2") } == nil)
        // A device revoked since still learns the result of its own tap (its offline queue).
        try l.run(.revokeDevice(device: "iphone", reason: "lost"))
        #expect(try l.run(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "cmd-q").replayed)
        #expect(try l.read { try $0.head().seq } == 6)  // 3 links, the proposal, the approval, the revocation
    }
}

extension BoundaryTests {
    /// Replay judges rules-version-2 events under their own org's policy: a store where two
    /// orgs set different policies replays clean, and a proposal smuggled in for a person
    /// under another org is named.
    @Test func replayJudgesEachOrgUnderItsOwnPolicy() throws {
        let t = try store(), l = t.ledger!
        try l.run(.setPolicy(PolicyDocument(userVerification: []), org: "other-co"))
        try l.run(.linkDevice(device: "mia-phone", person: "mia", org: "other-co", label: "M", platform: .ios))
        for (id, person, device) in [("q1", "quinn", "iphone"), ("m1", "mia", "mia-phone")] {
            var p = proposal(id, person: person, stakes: .high)
            p.org = person == "quinn" ? "quinn-co" : "other-co"
            try l.run(.propose(p))
            for step in [TapStep.review, .confirm] { try l.run(.tap(step, actionId: id, device: device)) }
        }
        // Mia's org needs no Face ID; Quinn's still does.
        try l.run(.tap(.approve, actionId: "m1", device: "mia-phone"))
        try l.run(.tap(.approve, actionId: "q1", device: "iphone", userVerified: true))
        let report = try l.replayDecisions()
        #expect(report.mismatch == nil)
        #expect(report.byRule[Policy.Rule.highThreeTaps] == 2)

        var forged = proposal("x1", person: "mia")
        forged.proposal.pinned = Policy.pin(forged.proposal, under: .builtIn)
        let seq = try l.read { try $0.head().seq } + 1
        try l.append(verbatim: [(Event(seq: seq, at: t0, actor: "specialist:Sasha", commandId: "cmd-x1", org: "quinn-co",
                                       person: "mia", actionId: "x1", payload: .proposed(forged.proposal)), nil)])
        let m = try l.replayDecisions().mismatch
        #expect(m?.seq == seq && m?.rule == "person.one_org" && m?.code == "org_mismatch")
    }
}
