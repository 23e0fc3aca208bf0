import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// The audit routes answer what the CLI answers, for the auditor's org only: rows chosen by
/// the org each event is recorded under, with the proof members the CLI prints.
@Suite struct AuditRoutesTests {
    @Test func anActorsListingIsTheAuditorsOrgByTheEventsOwnOrg() async throws {
        let h = try ServerHarness()
        let now = ServerHarness.systemNow()
        // The operator acts in both orgs; a policy and a token name no person of either.
        try h.ledger.run(.setPolicy(PolicyDocument(userVerification: []), org: "other-co"), now: now)
        try h.ledger.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co"), now: now)
        _ = try h.ledger.issueToken(org: "other-co", scope: .auditor, subject: nil, expiresAt: now.adding(milliseconds: Timestamp.day), now: now)
        try await h.test { client in
            let listing = try await client.call(.get, "/v1/audit/actors/operator?limit=1000", token: h.auditor)
            #expect(listing.status == .ok, "\(listing.text)")
            guard case .array(let items)? = listing.json["items"] else { Issue.record("no items: \(listing.text)"); return }
            let types = items.compactMap { item -> String? in if case .string(let t)? = item["type"] { t } else { nil } }
            // Its own org's policy and tokens are there; the other org's are not.
            #expect(types.contains("policy.set") && types.contains("token.issued") && types.contains("device.linked"), "\(types)")
            let all = try h.ledger.query { try $0.audit(.actor("operator"), limit: 1000) }.entries
            #expect(items.count == all.filter { $0.org == "quinn-co" }.count && all.contains { $0.org == "other-co" })
            // Every row carries the proof members, null for events no device made.
            #expect(items.allSatisfy { $0["proof_level"] != nil && $0["key_fingerprint"] != nil && $0["uv_basis"] != nil })
        }
    }

    @Test func deviceAndActionRowsCarryTheirProofLevels() async throws {
        let h = try ServerHarness()
        try h.ledger.run(.propose(proposal("p-proof", stakes: .low, confidence: 0.1)), now: ServerHarness.systemNow())
        try h.ledger.run(.tap(.approve, actionId: "p-proof", device: "phone-1", userVerified: true), now: ServerHarness.systemNow())
        try await h.test { client in
            let device = try await client.call(.get, "/v1/audit/devices/phone-1", token: h.auditor)
            guard case .array(let rows)? = device.json["items"] else { Issue.record("no items: \(device.text)"); return }
            #expect(rows.contains { $0["type"] == "action.approved" && $0["proof_level"] == "asserted" }, "\(device.text)")
            let action = try await client.call(.get, "/v1/audit/actions/p-proof", token: h.auditor)
            guard case .array(let trail)? = action.json["trail"] else { Issue.record("no trail: \(action.text)"); return }
            #expect(trail.contains { $0["type"] == "action.approved" && $0["proof_level"] == "asserted" }, "\(action.text)")
            // Its text does not read as verified: the approval only said so.
            #expect(trail.contains { $0["type"] == "action.approved" && $0["detail"] == "low stakes, user verification claimed, unproven" },
                    "\(action.text)")
            #expect(trail.contains { $0["type"] == "action.proposed" && $0["proof_level"] == .null })
            // A person's timeline too, as `ledger activity --json` prints it.
            let activity = try await client.call(.get, "/v1/audit/activity?person=quinn&type=action.approved", token: h.auditor)
            guard case .array(let steps)? = activity.json["items"] else { Issue.record("no items: \(activity.text)"); return }
            #expect(!steps.isEmpty && steps.allSatisfy { $0["proof_level"] == "asserted" && $0["uv_basis"] != nil }, "\(activity.text)")
            // A name no event holds, or an empty type, is refused as the CLI refuses it, not answered empty.
            let long = String(repeating: "p", count: 129)
            for uri in ["/v1/audit/activity?person=", "/v1/audit/activity?person=\(long)", "/v1/audit/activity?person=quinn&type=",
                        "/v1/audit/activity?person=quinn&type=action.approved,", "/v1/audit/autoshipped?person="] {
                let refused = try await client.call(.get, uri, token: h.auditor)
                #expect(refused.status == .badRequest && refused.code == "invalid_input", "\(uri): \(refused.status) \(refused.text)")
            }
            // A proposal's actor is its specialist's name, up to 256: such an actor is asked for whole.
            let actor = try await client.call(.get, "/v1/audit/actors/specialist:" + String(repeating: "S", count: 256), token: h.auditor)
            #expect(actor.status == .ok, "\(actor.status) \(actor.text)")
        }
    }

    /// A specialist's token never binds a person to its org: another org's token cannot
    /// claim her, so neither her enrolment nor what its auditor reads is another org's.
    @Test func aSpecialistProposesOnlyForPeopleOfItsOrg() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let unbound = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("p-carol", person: "carol"))
            #expect(unbound.status == .forbidden && unbound.code == "org_mismatch", "\(unbound.text)")
            // The operator's person id is named by every org's tokens and policies.
            let op = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("p-op", person: "operator"))
            #expect(op.status == .forbidden && op.code == "org_mismatch", "\(op.text)")
            let quinn = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("p-quinn"))
            #expect(quinn.status == .created, "\(quinn.text)")
        }
        #expect(try h.ledger.read { try $0.personOrg("carol") } == nil)
        // Still free for her own org's operator to enrol.
        try h.ledger.run(.linkDevice(device: "carol-phone", person: "carol", org: "other-co", label: "c", platform: .ios),
                         now: ServerHarness.systemNow())
    }

    /// A person's timeline over HTTP holds only events recorded under the auditor's org,
    /// whichever org the person id is bound to.
    @Test func anActivityTimelineIsTheAuditorsOrgByTheEventsOwnOrg() async throws {
        let h = try ServerHarness()
        let now = ServerHarness.systemNow()
        // The operator's events of another org: a token and a policy that name "operator".
        _ = try h.ledger.issueToken(org: "other-co", scope: .auditor, subject: nil, expiresAt: now.adding(milliseconds: Timestamp.day), now: now)
        try h.ledger.run(.setPolicy(PolicyDocument(userVerification: []), org: "other-co"), now: now)
        try h.ledger.run(.propose(ProposalInput(actionId: "p-op", org: "quinn-co", person: "operator",
                                                proposal: proposal("x").proposal)), now: now)
        try await h.test { client in
            let page = try await client.call(.get, "/v1/audit/activity?person=operator&limit=1000", token: h.auditor)
            #expect(page.status == .ok, "\(page.text)")
            guard case .array(let items)? = page.json["items"] else { Issue.record("no items: \(page.text)"); return }
            let all = try h.ledger.query { try $0.activity(person: "operator", limit: 1000) }.items
            let mine = try h.ledger.read { r in try all.filter { try r.event($0.seq)?.event.org == "quinn-co" } }
            #expect(all.count > mine.count && !mine.isEmpty)
            #expect(items.compactMap { if case .number(let n)? = $0["seq"] { UInt64(n) } else { nil } } == mine.map(\.seq), "\(page.text)")
        }
    }

    /// What the CLI answers an auditor, HTTP answers too: a specialist's and a surface's
    /// listings, the proof levels of the decisions, and an action's proofs, for the auditor's
    /// org only.
    @Test func specialistSurfaceAndProofViewsAnswerAsTheCLI() async throws {
        let h = try ServerHarness()
        let now = ServerHarness.systemNow()
        try h.ledger.run(.propose(proposal("p-a", stakes: .low, confidence: 0.1)), now: now)
        try h.ledger.run(.tap(.approve, actionId: "p-a", device: "phone-1", userVerified: true), now: now)
        // Another org's action under the same specialist and surface names: never in quinn-co's views.
        try h.ledger.run(.propose(ProposalInput(actionId: "p-other", org: "other-co", person: "olga",
                                                proposal: proposal("x", stakes: .low, confidence: 0.1).proposal)), now: now)
        try h.ledger.run(.linkDevice(device: "olga-phone", person: "olga", org: "other-co", label: "o", platform: .ios), now: now)
        try h.ledger.run(.tap(.approve, actionId: "p-other", device: "olga-phone", userVerified: true), now: now)
        // A specialist's name is free text (events.md): listed over HTTP as on the CLI.
        var spaced = proposal("p-kim", stakes: .low, confidence: 0.1)
        spaced.proposal.specialist = Specialist(name: "Sasha Kim", agent: "content-onlyfans")
        try h.ledger.run(.propose(spaced), now: now)
        var marked = proposal("p-bom", stakes: .low, confidence: 0.1)
        marked.proposal.specialist = Specialist(name: "\u{FEFF}Sasha Kim", agent: "content-onlyfans")
        try h.ledger.run(.propose(marked), now: now)
        try await h.test { client in
            for (path, index) in [("specialists/Sasha", AuditIndex.specialist("Sasha")), ("surfaces/onlyfans", .surface("onlyfans"))] {
                let r = try await client.call(.get, "/v1/audit/\(path)?limit=1000", token: h.auditor)
                guard case .array(let items)? = r.json["items"] else { Issue.record("\(path): \(r.text)"); continue }
                let all = try h.ledger.query { try $0.audit(index, limit: 1000) }.entries
                #expect(all.contains { $0.org == "other-co" }, "\(path)")
                #expect(items.compactMap { if case .number(let n)? = $0["seq"] { UInt64(n) } else { nil } }
                        == all.filter { $0.org == "quinn-co" }.map(\.seq), "\(path): \(r.text)")
                #expect(items.allSatisfy { $0["proof_level"] != nil }, "\(path)")
            }
            let kim = try await client.call(.get, "/v1/audit/specialists/Sasha%20Kim", token: h.auditor)
            #expect(kim.status == .ok && kim.json["count"] == 1, "\(kim.text)")
            // A leading U+FEFF is part of the name, not dropped by the decoding.
            let bom = try await client.call(.get, "/v1/audit/specialists/%EF%BB%BFSasha%20Kim", token: h.auditor)
            #expect(bom.status == .ok && bom.json["count"] == 1 && bom.text.contains("p-bom"), "\(bom.text)")
            let long = String(repeating: "a", count: 257)
            #expect(try await client.call(.get, "/v1/audit/specialists/\(long)", token: h.auditor).status == .badRequest)
            let proofs = try await client.call(.get, "/v1/audit/proofs", token: h.auditor)
            #expect(proofs.status == .ok, "\(proofs.text)")
            let cli = try h.ledger.proofReport(in: .all, org: "quinn-co").json
            #expect(proofs.json == cli && proofs.json["by_level"]?["asserted"] == 1, "\(proofs.text) against \(cli.serialized())")
            // Paged as the CLI pages it: limit and page_token reach the engine.
            let one = try await client.call(.get, "/v1/audit/proofs?limit=1", token: h.auditor)
            #expect(one.json == (try h.ledger.proofReport(in: .all, org: "quinn-co", limit: 1).json), "\(one.text)")
            #expect(try await client.call(.get, "/v1/audit/proofs?limit=0", token: h.auditor).status == .badRequest)
            #expect(try await client.call(.get, "/v1/audit/proofs?page_token=\(String(repeating: "0", count: 48))",
                                          token: h.auditor).status == .badRequest)
            let action = try await client.call(.get, "/v1/actions/p-a", token: h.auditor)
            guard case .array(let rows)? = action.json["proofs"] else { Issue.record("no proofs: \(action.text)"); return }
            #expect(rows.count == 1 && rows.first?["type"] == "action.approved" && rows.first?["proof_level"] == "asserted", "\(action.text)")
        }
    }

    /// A page token must name a row of its listing as the caller sees it: one forged for
    /// another org's event (its time guessed) is refused like any token never printed, so
    /// the answers tell no event times of another org.
    @Test func aForgedPageTokenForAnotherOrgsEventIsRefused() async throws {
        let h = try ServerHarness()
        let now = ServerHarness.systemNow()
        try h.ledger.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co"), now: now)
        let other = try h.ledger.run(.setPolicy(PolicyDocument(userVerification: []), org: "other-co"), now: now).events[0]
        try h.ledger.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co"), now: now)
        let forged = try h.ledger.query { q in
            (q.rowToken(at: other.event.at, seq: other.seq, query: "audit/\(AuditProjection.byActor)/operator"),
             q.rowToken(at: other.event.at, seq: other.seq, query: "activity/operator/all"))
        }
        try await h.test { client in
            let actor = try await client.call(.get, "/v1/audit/actors/operator?page_token=\(forged.0)", token: h.auditor)
            #expect(actor.status == .badRequest && actor.code == "invalid_input", "\(actor.text)")
            let activity = try await client.call(.get, "/v1/audit/activity?person=operator&page_token=\(forged.1)", token: h.auditor)
            #expect(activity.status == .badRequest && activity.code == "invalid_input", "\(activity.text)")
        }
        // The operator's own CLI listing (no org filter) takes the same token: the row is one of it.
        #expect(try h.ledger.query { try $0.audit(.actor("operator"), pageToken: forged.0) }.entries.allSatisfy { $0.seq > other.seq })
    }
}
