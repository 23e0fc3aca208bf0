import Foundation
import Testing
@testable import ActionLedger

/// `audit proofs` pages its two lists of unproven decisions (Specs/queries.md): one call over
/// 82,000 decisions had answered 14.5 MB. The counts stay the window's on every page.
@Suite struct ProofReportPagingTests {
    /// Seven low-stakes approvals and two dismissals from quinn's unkeyed iphone (all
    /// unproven, `none`), and three approvals in another org.
    func store() throws -> TempLedger {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        try l.run(.linkDevice(device: "ria-phone", person: "ria", org: "other-co", label: "Ria", platform: .ios))
        for i in 0..<9 {
            try l.run(.propose(proposal("q\(i)", stakes: .low)))
            if i % 4 == 3 {
                try l.run(.dismiss(actionId: "q\(i)", device: "iphone", reason: "no"))
            } else {
                try l.run(.tap(.approve, actionId: "q\(i)", device: "iphone"))
            }
        }
        for i in 0..<3 {
            var p = proposal("r\(i)", person: "ria", stakes: .low)
            p.org = "other-co"
            try l.run(.propose(p))
            try l.run(.tap(.approve, actionId: "r\(i)", device: "ria-phone"))
        }
        return t
    }

    @Test func pagesJoinToTheWholeListWithTheWindowsCountsOnEveryPage() throws {
        let t = try store()
        let whole = try t.ledger.proofReport(in: .all, org: "quinn-co", limit: 1000)
        #expect(whole.unproven.count == 9 && whole.unprovenTotal == 9 && whole.nextPageToken == nil)
        var rows: [ProofReport.Unproven] = []
        var token: String?
        var pages = 0
        repeat {
            let page = try t.ledger.proofReport(in: .all, org: "quinn-co", limit: 4, pageToken: token)
            #expect(page.unproven.count <= 4 && page.byLevel == whole.byLevel && page.unprovenTotal == 9)
            rows += page.unproven
            token = page.nextPageToken
            pages += 1
        } while token != nil && pages < 10
        // 4 + 4 + 1: the last page has no token, and a full page followed by nothing has none either.
        #expect(pages == 3 && rows == whole.unproven)
        let exact = try t.ledger.proofReport(in: .all, org: "quinn-co", limit: 9)
        #expect(exact.unproven.count == 9 && exact.nextPageToken == nil)
        // The JSON names the totals and the token.
        let json = try t.ledger.proofReport(in: .all, org: "quinn-co", limit: 2).json
        #expect(json["unproven_total"] == 9 && json["user_verification_unproven_total"] == 0)
        #expect(json["next_page_token"] != .null && json["decisions"] == 9)
    }

    /// A page's counts are the window's as the log stands at that page, decisions appended
    /// between pages included, as a handle that never paged counts them; they come from the
    /// previous page's counts plus the events since, not from the window read again.
    @Test func countsCarryFromPageToPageAndTakeInWhatWasAppended() throws {
        let t = try store()
        let l = t.ledger!
        func fresh(_ window: TimeWindow) throws -> ProofReport {
            try Ledger(path: t.path, options: Ledger.Options(readOnly: true)).proofReport(in: window, org: "quinn-co", limit: 4)
        }
        let windows = [TimeWindow.all, TimeWindow(from: t0.adding(milliseconds: -3_600_000), to: t0.adding(milliseconds: 3_600_000))]
        for window in windows {
            var token: String?
            var pages = 0
            var pending = "late-\(window.to.milliseconds)-0"
            try l.run(.propose(proposal(pending, stakes: .low)))
            repeat {
                let page = try l.proofReport(in: window, org: "quinn-co", limit: 4, pageToken: token)
                let expected = try fresh(window)
                #expect(page.byLevel == expected.byLevel && page.unprovenTotal == expected.unprovenTotal
                        && page.autoShipped == expected.autoShipped, "page \(pages): \(page.json) against \(expected.json)")
                // Between pages, the first event past the page's head a decision: one more
                // unproven approval, then an auto-ship.
                pages += 1
                try l.run(.tap(.approve, actionId: pending, device: "iphone"))
                try l.run(.propose(proposal(pending + "-auto", stakes: .low, confidence: 0.99)))
                pending = "late-\(window.to.milliseconds)-\(pages)"
                try l.run(.propose(proposal(pending, stakes: .low)))
                token = page.nextPageToken
            } while token != nil && pages < 20
            #expect(pages >= 3)
        }
        #expect(try fresh(.all).autoShipped > 0)
        // The counts kept are used: planted against the head's own hash, a page answers them…
        let query = ProofCountCache.Query(from: TimeWindow.all.from, to: TimeWindow.all.to, org: "quinn-co")
        let head = try l.read { try $0.head() }
        var planted = ProofCounts()
        planted.unprovenTotal = 1_000_000
        l.proofCounts.store(.init(head: head, counts: planted), for: query)
        #expect(try l.proofReport(in: .all, org: "quinn-co").unprovenTotal == 1_000_000)
        // …but never against a hash the log does not hold at that seq: counted afresh.
        l.proofCounts.store(.init(head: LogHead(seq: head.seq, hash: Digest(bytes: [UInt8](repeating: 7, count: 32))!), counts: planted),
                            for: query)
        #expect(try l.proofReport(in: .all, org: "quinn-co").unprovenTotal == (try fresh(.all)).unprovenTotal)
    }

    /// A token is refused when another org's query, or another query, printed it, or when it
    /// names an event that is not one of the listing's rows (forged).
    @Test func aTokenWorksForItsOwnListingOnly() throws {
        let t = try store()
        let l = t.ledger!
        let mine = try #require(try l.proofReport(in: .all, org: "quinn-co", limit: 1).nextPageToken)
        let theirs = try #require(try l.proofReport(in: .all, org: "other-co", limit: 1).nextPageToken)
        expectLedgerError(.invalidInput) { try l.proofReport(in: .all, org: "quinn-co", pageToken: theirs) }
        expectLedgerError(.invalidInput) { try l.proofReport(in: .all, org: "other-co", pageToken: mine) }
        let listing = try l.query { try $0.audit(.device("iphone"), limit: 1) }
        expectLedgerError(.invalidInput) { try l.proofReport(in: .all, org: "quinn-co", pageToken: listing.nextPageToken) }
        // Same tag, a seq that is no row (the device link at seq 2): never printed, refused.
        let forged = try l.query { s in s.rowToken(at: try #require(try LogReader(txn: s.txn, dbs: s.dbs).time(of: 2)),
                                                  seq: 2, query: "proofs/quinn-co") }
        expectLedgerError(.invalidInput) { try l.proofReport(in: .all, org: "quinn-co", pageToken: forged) }
        expectLedgerError(.invalidInput) { try l.proofReport(in: .all, limit: 0) }
        // The store-wide report (the CLI's) lists both orgs and pages them alike.
        #expect(try l.proofReport(in: .all, limit: 100).unprovenTotal == 12)
    }
}
