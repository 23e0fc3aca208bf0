import Testing
@testable import ActionLedger

/// A command's result carries the action as folded in memory from the state it judged
/// plus the events it appended: it must equal the state rebuilt from the log.
@Suite struct CommandResultStateTests {
    @Test func resultStateEqualsTheStateRebuiltFromTheLog() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let later = at("2026-11-22T10:00:00Z")
        let commands: [Command] = [
            .propose(proposal("m", stakes: .medium)),
            .propose(proposal("auto", stakes: .low, confidence: 0.95)),   // proposed + auto-shipped
            .propose(proposal("h", stakes: .high)),
            .propose(proposal("d")),
            .propose(proposal("x", expiresAt: at("2026-11-22T09:30:00Z"))),
            .tap(.review, actionId: "m", device: "iphone"),
            .tap(.review, actionId: "m", device: "iphone"),                // duplicate: nothing appended
            .edit(actionId: "m", device: "iphone", text: "Edited"),
            .tap(.review, actionId: "m", device: "iphone"),
            .tap(.approve, actionId: "m", device: "iphone"),
            .recordOutcome(actionId: "m", succeeded: true, outcome: .object(["post": .string("p1")])),
            .tap(.review, actionId: "h", device: "iphone"),
            .tap(.confirm, actionId: "h", device: "iphone"),
            .hold(actionId: "h", device: "iphone", until: later),
            .tap(.approve, actionId: "h", device: "iphone", userVerified: true),
            .dismiss(actionId: "d", device: "iphone", reason: "no"),
            .recordOutcome(actionId: "auto", succeeded: false, outcome: .object([:])),
        ]
        for command in commands {
            let r = try l.run(command)
            let id = try #require(command.actionId)
            #expect(r.action != nil)
            #expect(r.action == (try l.read { try $0.actionState(id) }), "after \(command)")
        }
        let expired = try l.run(.expire(actionId: "x"), now: later)
        #expect(expired.action?.status == .expired)
        #expect(expired.action == (try l.read { try $0.actionState("x") }))
    }
}

/// Past its `expires_at` an action is `expired` in every answer, with no next tap, before
/// `action.expired` is recorded as after, and a running hold does not make it `held`: the
/// engine refuses every tap then.
@Suite struct ExpiredDisplayTests {
    @Test func anActionPastItsExpiryShowsExpiredWithNoNextTap() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let expires = t0.adding(milliseconds: 3_600_000), after = expires.adding(milliseconds: 1)
        try l.run(.propose(proposal("w", expiresAt: expires)))
        try l.run(.propose(proposal("held", expiresAt: expires)))
        try l.run(.hold(actionId: "held", device: "iphone", until: expires.adding(milliseconds: 3_600_000)))
        let policy = try l.read { try $0.policy(org: "quinn-co") }
        for id in ["w", "held"] {
            let s = try #require(try l.read { try $0.actionState(id) })
            #expect(s.json(now: t0, policy: policy)["next_tap"] == .string("review"))
            #expect(s.json(now: after, policy: policy)["state"] == .string("expired"), "\(id)")
            #expect(s.json(now: after, policy: policy)["next_tap"] == JSON.null, "\(id)")
            #expect(Policy.nextTap(s, under: policy, now: after) == nil)
            try requireLedgerError(.actionExpired) { try l.run(.tap(.review, actionId: id, device: "iphone"), now: after) }
        }
        #expect(try l.read { try $0.actionState("held") }!.displayState(now: t0) == "held")
        try l.run(.expire(actionId: "w"), now: after)
        let recorded = try #require(try l.read { try $0.actionState("w") })
        #expect(recorded.json(now: after, policy: policy)["next_tap"] == JSON.null)
        #expect(recorded.displayState(now: after) == "expired")
    }
}
