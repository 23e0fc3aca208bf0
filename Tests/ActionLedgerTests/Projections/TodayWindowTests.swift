import Testing
@testable import ActionLedger

/// The edges of the Today feed and of the auto-ship windows.
@Suite struct TodayWindowTests {
    let now = at("2026-11-22T12:00:00Z")

    func ms(_ d: Int64) -> Timestamp { now.adding(milliseconds: d) }

    @Test func autoShipWindowIncludesNowAndExcludesExactly24hAgo() throws {
        let t = try TempLedger()
        let l = t.ledger!
        let times: [(String, Int64, String)] = [("s0", -Timestamp.day, "publish_post"), ("s1", -Timestamp.day + 1, "send_reply"),
                                                ("s2", -Timestamp.hour, "send_reply"), ("s3", 0, "publish_post"),
                                                ("s4", 1, "send_reply")]
        for (id, offset, kind) in times {
            let r = try l.run(.propose(proposal(id, stakes: .low, confidence: 0.95, kind: kind)), now: ms(offset))
            #expect(r.action?.status == .autoShipped)
        }
        let feed = try l.query { try $0.today(TodayQuery(person: "quinn", now: now)) }
        #expect(feed.autoShipped.count == 3)
        #expect(feed.autoShipped.byKind.map(\.kind) == ["publish_post", "send_reply"])
        #expect(feed.autoShipped.byKind.map(\.count) == [1, 2])
        #expect(feed.json["auto_shipped_24h"]?["by_kind"]?["send_reply"] == 2)

        let last24 = try l.query { try $0.autoShipped(in: .last(Timestamp.day, before: now)) }
        #expect(last24.items.map(\.actionId) == ["s1", "s2", "s3"])
        // An explicit window is half-open: from ≤ at < to.
        let explicit = try l.query { try $0.autoShipped(in: TimeWindow(from: ms(-Timestamp.day), to: now)) }
        #expect(explicit.items.map(\.actionId) == ["s0", "s1", "s2"])
        #expect(explicit.count == 3 && explicit.byKind.map(\.count) == [1, 2])
        let one = try l.query { try $0.autoShipped(in: TimeWindow(from: now, to: ms(1))) }
        #expect(one.items.map(\.actionId) == ["s3"])
        #expect(one.items.first?.rule == Policy.Rule.autoShip && one.items.first?.policyVersion == 0)
        // 24 hours later, only what shipped after `now` is left in the card.
        let later = try l.query { try $0.today(TodayQuery(person: "quinn", now: ms(Timestamp.day))) }
        #expect(later.autoShipped.count == 1)
    }

    @Test func heldUntilExactlyNowIsBackAndExpiringAtNowIsGone() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let start = ms(-Timestamp.hour)
        try l.run(.propose(proposal("held", stakes: .medium)), now: start)
        try l.run(.hold(actionId: "held", device: "iphone", until: now), now: start)
        try l.run(.propose(proposal("expiring", stakes: .medium, expiresAt: now)), now: start)
        func ids(_ at: Timestamp) throws -> [String] {
            try l.query { try $0.today(TodayQuery(person: "quinn", now: at)) }.items.map(\.actionId)
        }
        #expect(try ids(ms(-1)) == ["expiring"])
        #expect(try ids(now) == ["held"])
        #expect(try ids(ms(1)) == ["held"])
        #expect(try l.query { try $0.auditAction("held", now: ms(-1)) }.state == "held")
        #expect(try l.query { try $0.auditAction("held", now: now) }.state == "pending")
        #expect(try l.query { try $0.auditAction("expiring", now: now) }.state == "expired")
        // The expire command removes it for good; at any instant.
        try l.run(.expire(actionId: "expiring"), now: now)
        #expect(try ids(ms(-1)) == [])
    }

    @Test func orderedByStakesThenAgeAndPagedWithoutGapsOrRepeats() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        try l.link("mia-phone", person: "mia")
        let plan: [(String, Stakes, Int64)] = [("m-old", .medium, -50), ("l-old", .low, -40), ("h-new", .high, -10),
                                               ("m-new", .medium, -5), ("h-old", .high, -30), ("m-mid", .medium, -20)]
        // Proposed oldest first: event times never go backwards along the log.
        for (id, stakes, minutes) in plan.sorted(by: { $0.2 < $1.2 }) {
            try l.run(.propose(proposal(id, stakes: stakes, confidence: 0.5)), now: ms(minutes * 60_000))
        }
        try l.run(.propose(proposal("other", person: "mia", stakes: .high)), now: ms(-60_000))
        let order = ["h-old", "h-new", "m-old", "m-mid", "m-new", "l-old"]
        let all = try l.query { try $0.today(TodayQuery(person: "quinn", now: now, limit: 100)) }
        #expect(all.items.map(\.actionId) == order)
        #expect(all.items.map(\.nextTap) == [.review, .review, .review, .review, .review, .approve])
        #expect(all.count == 6 && all.headline == "6 things need you" && all.nextPageToken == nil)
        #expect(all.drafts.count == 1 && all.drafts[0].specialist == "Sasha" && all.drafts[0].count == 6)

        var seen: [String] = []
        var token: String?
        repeat {
            let page = try l.query { try $0.today(TodayQuery(person: "quinn", now: now, limit: 4, pageToken: token)) }
            #expect(page.count == 6)
            seen += page.items.map(\.actionId)
            token = page.nextPageToken
        } while token != nil && seen.count <= order.count  // a token that never ends fails below, never hangs
        #expect(seen == order)
        let second = try l.query { try $0.today(TodayQuery(person: "quinn", now: now, limit: 4, offset: 4)) }
        #expect(second.items.map(\.actionId) == ["m-new", "l-old"] && second.nextPageToken == nil)
        expectLedgerError(.invalidInput) { try l.query { try $0.today(TodayQuery(person: "quinn", now: now, pageToken: "zz")) } }

        // A tap moves the next tap on; a policy raising stakes re-ranks the feed.
        try l.run(.tap(.review, actionId: "m-old", device: "iphone"), now: now)
        try l.run(.setPolicy(PolicyDocument(raise: [.init(kind: "publish_post", stakes: .high)]), org: "quinn-co"), now: now)
        let raised = try l.query { try $0.today(TodayQuery(person: "quinn", now: now, limit: 100)) }
        // Every draft is a publish_post: all are high now, so oldest first.
        #expect(raised.items.map(\.actionId) == ["m-old", "l-old", "h-old", "m-mid", "h-new", "m-new"])
        #expect(raised.items.allSatisfy { $0.stakes == .high })
        #expect(raised.items.first { $0.actionId == "m-old" }?.nextTap == .confirm)
        #expect(raised.policyVersion == 1)
        // Her org's version with no card shown too (a page past the last, every card decided);
        // 0 for a person no event has bound to an org.
        #expect(try l.query { try $0.today(TodayQuery(person: "quinn", now: now, limit: 4, offset: 100)) }.policyVersion == 1)
        try l.run(.dismiss(actionId: "other", device: "mia-phone", reason: ""), now: now)
        let none = try l.query { try $0.today(TodayQuery(person: "mia", now: now)) }
        #expect(none.count == 0 && none.policyVersion == 1)
        #expect(try l.query { try $0.today(TodayQuery(person: "nobody", now: now)) }.policyVersion == 0)
    }
}

/// Audit listings over a window: every event (the log itself, no `by_time` list) and a
/// posting list (seqs only), the window found as a seq range by binary search over the log.
@Suite struct AuditEventsWindowTests {
    let now = at("2026-11-22T12:00:00Z")

    @Test func windowAndPagesFollowTheLogWithEqualTimesAndTheUnfoldedTail() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        // Runs of events sharing one millisecond, so the window's edge and the page tokens
        // fall inside a run; the last few stay in the projections' unfolded tail.
        for i in 0..<30 {
            let time = now.adding(milliseconds: Int64(i / 4) * 1000)
            try l.run(.propose(proposal("e\(i)", stakes: .medium)), now: time)
            if i % 3 == 0 { try l.run(.tap(.review, actionId: "e\(i)", device: "iphone"), now: time) }
        }
        let all = try l.read { r in try (1...r.head().seq).map { try r.event($0)!.event } }
        for from in [now, now.adding(milliseconds: 2000), now.adding(milliseconds: 2001), now.adding(milliseconds: 99_000)] {
            let to = now.adding(milliseconds: 6000)
            let expected = all.filter { $0.at >= from && $0.at < to }.map(\.seq)
            // The same through a posting list (seqs only, the window a seq range of the log).
            let byDevice = all.filter { $0.at >= from && $0.at < to && $0.device == "iphone" }.map(\.seq)
            for (index, expected) in [(AuditIndex.all, expected), (.device("iphone"), byDevice)] {
                for limit in [1, 3, 100] {
                    var seen: [UInt64] = [], token: String?
                    repeat {
                        let page = try l.query { try $0.audit(index, in: TimeWindow(from: from, to: to), limit: limit, pageToken: token) }
                        #expect(page.entries.count <= limit)
                        seen += page.entries.map(\.seq)
                        token = page.nextPageToken
                    } while token != nil
                    #expect(seen == expected, "\(index) from \(from.iso8601), limit \(limit)")
                }
            }
        }
        // The whole log, rows as the log holds them.
        let every = try l.query { try $0.audit(.all, limit: 100_000) }
        #expect(every.entries.map(\.seq) == all.map(\.seq))
        #expect(every.entries.map(\.type) == all.map(\.type))
    }
}
