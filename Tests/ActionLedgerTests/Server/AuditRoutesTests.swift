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
        }
    }
}
