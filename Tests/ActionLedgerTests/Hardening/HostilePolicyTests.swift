import Foundation
import Testing
@testable import ActionLedger

/// What a hostile tester found in what `show`, results, audit rows and Today say of the
/// policy: another org's policy was shown, pinned stakes ignored, and a person's Today token
/// worked on another person's feed.
@Suite struct HostilePolicyTests {
    let fixture: ProcessFixture
    init() throws { fixture = try ProcessFixture("policy") }

    func ledger(_ args: [String], _ db: String, stdin: String? = nil) throws -> LedgerProcess.Output {
        try LedgerProcess.run(args + ["--db", db, "--json"], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"], stdin: stdin)
    }

    func store() throws -> String {
        let db = fixture.path("orgs-\(UUID().uuidString).lmdb")
        #expect(try ledger(["init", "--test-clock"], db).status == 0)
        #expect(try ledger(["devices", "link", "ph", "--person", "quinn", "--label", "P", "--platform", "ios", "--org", "o1"], db).status == 0)
        #expect(try ledger(["devices", "link", "xo", "--person", "xena", "--label", "X", "--platform", "ios", "--org", "o2"], db).status == 0)
        return db
    }

    static func proposal(_ id: String, org: String = "o1", person: String = "quinn", stakes: String = "low") -> String {
        #"{"action_id":"\#(id)","org":"\#(org)","person":"\#(person)","specialist":{"name":"S","agent":"a"},"surface":"x","kind":"publish_post","target":{"type":"feed","id":"t"},"stakes":"\#(stakes)","confidence":0.1,"preview":{"text":"hi"},"rationale":"r"}"#
    }

    static func json(_ out: LedgerProcess.Output) throws -> JSON { try JSONParser.parse(Array(out.stdout.utf8)) }

    /// `show` and a command's result judge the action under its own org's policy, as the
    /// engine and Today do, never the latest set in another org.
    @Test func showAndResultsUseTheActionsOwnOrgsPolicy() throws {
        let db = try store()
        #expect(try ledger(["policy", "set", "-", "--org", "o1"], db, stdin: #"{"auto_ship":{"enabled":false}}"#).status == 0)
        #expect(try ledger(["policy", "set", "-", "--org", "o2"], db, stdin: #"{"raise":[{"stakes":"high"}]}"#).status == 0)
        let proposed = try Self.json(try ledger(["propose", "-"], db, stdin: Self.proposal("a1")))
        #expect(proposed["action", "effective_stakes"] == "low" && proposed["action", "next_tap"] == "approve", "\(proposed)")
        let shown = try Self.json(try ledger(["show", "a1"], db))
        #expect(shown["action", "effective_stakes"] == "low" && shown["action", "next_tap"] == "approve", "\(shown)")
        let today = try Self.json(try ledger(["today", "--person", "quinn"], db))
        guard case .array(let items)? = today["items"], let card = items.first else { Issue.record("no card: \(today)"); return }
        #expect(card["stakes"] == "low" && card["next_tap"] == "approve")
        #expect(try Self.json(try ledger(["policy", "show", "--org", "o1"], db))["version"] == 1)
    }

    /// Pinned stakes count in `effective_stakes`, as they do for the engine (a later policy
    /// never loosens an action proposed under a stricter one).
    @Test func effectiveStakesKeepThePinnedOnes() throws {
        let db = try store()
        #expect(try ledger(["policy", "set", "-", "--org", "o1"], db, stdin: #"{"raise":[{"surface":"x","stakes":"medium"}]}"#).status == 0)
        #expect(try ledger(["propose", "-"], db, stdin: Self.proposal("u1")).status == 0)
        #expect(try ledger(["policy", "set", "-", "--org", "o1"], db, stdin: "{}").status == 0)
        let shown = try Self.json(try ledger(["show", "u1"], db))
        #expect(shown["action", "effective_stakes"] == "medium" && shown["action", "next_tap"] == "review", "\(shown)")
    }

    /// An audit row's `policy_version` is its org's in force, not another org's later one;
    /// a `policy set` naming version 0 is refused (0 is the built-in default).
    @Test func auditRowsGiveTheirOrgsPolicyVersion() throws {
        let db = try store()
        #expect(try ledger(["policy", "set", "-", "--org", "o1"], db, stdin: "{}").status == 0)
        for _ in 0..<3 { #expect(try ledger(["policy", "set", "-", "--org", "o2"], db, stdin: "{}").status == 0) }
        #expect(try ledger(["policy", "set", "-", "--org", "o1"], db, stdin: #"{"version":0}"#).status == 2)
        #expect(try ledger(["propose", "-"], db, stdin: Self.proposal("a1", stakes: "medium")).status == 0)
        #expect(try ledger(["review", "a1", "--device", "ph"], db).status == 0)
        #expect(try ledger(["hold", "a1", "--device", "ph", "--until", "2026-11-22T10:00:00Z"], db).status == 0)
        let trail = try Self.json(try ledger(["audit", "action", "a1"], db))
        guard case .array(let rows)? = trail["trail"] else { Issue.record("no trail: \(trail)"); return }
        #expect(rows.count == 3 && rows.allSatisfy { $0["policy_version"] == 1 }, "\(rows)")
    }

    /// A Today page token is the person's: another person's feed refuses it.
    @Test func aTodayTokenIsThePersonsOnly() throws {
        let db = try store()
        for (id, person, org) in [("q1", "quinn", "o1"), ("q2", "quinn", "o1"), ("q3", "quinn", "o1"), ("z1", "xena", "o2")] {
            #expect(try ledger(["propose", "-"], db, stdin: Self.proposal(id, org: org, person: person)).status == 0)
        }
        let page = try Self.json(try ledger(["today", "--person", "quinn", "--limit", "2"], db))
        guard case .string(let token)? = page["next_page_token"] else { Issue.record("no token: \(page)"); return }
        let next = try Self.json(try ledger(["today", "--person", "quinn", "--limit", "2", "--page-token", token], db))
        guard case .array(let rest)? = next["items"] else { Issue.record("no items"); return }
        #expect(rest.count == 1)
        let other = try ledger(["today", "--person", "xena", "--page-token", token], db)
        #expect(other.status == 2 && other.stdout.contains("page_token"), "\(other.stdout)")
    }
}
