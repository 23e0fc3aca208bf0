import Foundation
import Testing
@testable import ActionLedger

/// The policy's proof table (Specs/policy.md §2a): what each step requires per effective
/// stakes, enforced by the engine and by decision replay.
@Suite struct ProofPolicyTests {
    /// Specs/policies/strict.json, the shipped strict policy.
    static func strict() throws -> PolicyDocument {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Specs/policies/strict.json")
        return try PolicyDocument(json: try JSONParser.parse(String(contentsOf: url, encoding: .utf8)))
    }

    /// A store under the strict policy with one pending action `a1` at `stakes`.
    static func strictStore(_ stakes: Stakes) throws -> TempLedger {
        let t = try keyedStore(stakes: stakes)
        try t.ledger.run(.setPolicy(try strict(), org: "quinn-co"))
        return t
    }

    @Test func theStrictPolicyRequiresWhatTheSpecSays() throws {
        let p = try Self.strict().proofs
        #expect(p[.low, .approve] == .none && p[.low, .dismiss] == .none)
        for step in [Statement.Step.review, .approve, .dismiss, .edit, .hold] { #expect(p[.medium, step] == .signed) }
        #expect(p[.high, .approve] == .signedUV && p[.high, .dismiss] == .signed && p[.high, .confirm] == .signed)
        #expect(p == ProofRequirements.strict, "the demo's strict table drifted from Specs/policies/strict.json")
    }

    /// Today and the action say what the next step's proof must be, so a client knows
    /// before it signs whether the device can make it.
    @Test func theNextStepsProofIsShownBeforeItIsTried() throws {
        let t = try Self.strictStore(.high)
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        func shown() throws -> (today: JSON?, action: JSON?) {
            let item = try t.ledger.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }.items.first?.json
            let policy = try t.ledger.read { try $0.policy(org: "quinn-co") }
            let action = try t.ledger.read { try $0.actionState("a1") }?.json(now: t0, policy: policy)
            return (item?["next_proof"], action?["next_proof"])
        }
        #expect(try shown() == (.string("signed"), .string("signed")))
        // The same once the policy is in the stored projection, not in a query's replayed tail.
        _ = try t.ledger.rebuild()
        #expect(try shown() == (.string("signed"), .string("signed")))
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone)
        try t.ledger.signed(.tap(.confirm, actionId: "a1", device: "iphone"), phone)
        #expect(try shown() == (.string("signed_uv"), .string("signed_uv")))
        try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), phone)
        #expect(try shown() == (nil, .null))
    }

    @Test func anUnsignedStepIsRefusedNamingWhatItNeeds() throws {
        let t = try Self.strictStore(.medium)
        try t.ledger.link("tablet")
        let e = try requireLedgerError(.proofRequired) { try t.ledger.run(.tap(.review, actionId: "a1", device: "tablet")) }
        #expect(e.details["step"] == "review" && e.details["required"] == "signed" && e.details["level"] == "none")
        #expect(e.message.contains("review of medium-stakes action a1 needs a signed proof"))
        try requireLedgerError(.proofRequired) { try t.ledger.run(.dismiss(actionId: "a1", device: "tablet", reason: "")) }
        try requireLedgerError(.proofRequired) { try t.ledger.run(.edit(actionId: "a1", device: "tablet", text: "x")) }
        // Signed by a keyed device of hers, the same steps pass.
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone)
        let r = try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), phone)
        #expect(r.action?.status == .approved)
        #expect(try t.ledger.replayDecisions().mismatch == nil)
    }

    @Test func theHighApproveNeedsProvenUserVerification() throws {
        let t = try Self.strictStore(.high)
        let laptop = TestDeviceKey(), phone = TestDeviceKey()
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli)
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification, introducer: ("laptop", laptop))
        try t.ledger.link("tablet")
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "laptop"), laptop)
        try t.ledger.signed(.tap(.confirm, actionId: "a1", device: "laptop"), laptop)
        // An assertion is not a proof, and a signature by a key without user verification is not either.
        let asserted = try requireLedgerError(.proofRequired) {
            try t.ledger.run(.tap(.approve, actionId: "a1", device: "tablet", userVerified: true))
        }
        #expect(asserted.details["level"] == "asserted" && asserted.details["required"] == "signed_uv")
        let signed = try requireLedgerError(.proofRequired) {
            try t.ledger.signed(.tap(.approve, actionId: "a1", device: "laptop", userVerified: true), laptop)
        }
        #expect(signed.details["level"] == "signed")
        let r = try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), phone)
        guard case .approved(let a)? = r.events.first?.event.payload else { Issue.record("no approval"); return }
        #expect(a.proof?.level == .signedUV && a.userVerified)
        #expect(try t.ledger.replayDecisions().mismatch == nil)
    }

    @Test func lowStakesAndOldPoliciesRequireNothing() throws {
        let t = try Self.strictStore(.low)
        try t.ledger.link("tablet")
        #expect(try t.ledger.run(.tap(.approve, actionId: "a1", device: "tablet")).action?.status == .approved)
        // The built-in policy and a policy.set without a table: none everywhere.
        #expect(PolicyDocument.builtIn.proofs.isEmpty)
        let old = try PolicyDocument(json: try JSONParser.parse(#"{"user_verification":["high"]}"#))
        #expect(old.proofs.isEmpty && !old.json.serialized().contains("proofs"))
    }

    @Test func aPolicyWithRequirementsIsSchemaTwo() throws {
        let t = try Self.strictStore(.low)
        let event = try t.ledger.read { try $0.event(3)!.event }
        guard case .policySet(let p) = event.payload else { Issue.record("not a policy.set"); return }
        let strict = try Self.strict().proofs
        #expect(event.schemaVersion == 2 && p.proofs == strict)
        #expect(EventCodec.encode(try Event(json: event.json())) == EventCodec.encode(event))
        // Schema 1 cannot carry a table, schema 2 must.
        guard case .object(var o) = event.json() else { return }
        o["schema_version"] = 1
        try requireLedgerError(.invalidInput) { try Event(json: .object(o)) }
        var bare = event
        bare.payload = .policySet(PolicyDocument(version: p.version))
        guard case .object(var b) = bare.json() else { return }
        b["schema_version"] = 2
        try requireLedgerError(.invalidInput) { try Event(json: .object(b)) }
        // An unknown requirement or step is refused on input.
        for bad in [#"{"proofs":{"high":{"approve":"uv"}}}"#, #"{"proofs":{"high":{"execute":"signed"}}}"#] {
            try requireLedgerError(.invalidInput, bad) { try PolicyDocument(json: try JSONParser.parse(bad)) }
        }
    }

    /// Replay judges each step against the table of the policy version in force: a log
    /// whose unsigned review was appended under a policy requiring a signature is refused.
    @Test func replayChecksTheLevelThePolicyRequired() throws {
        let t = try TempLedger()
        let policy = PolicyDocument(version: 1, proofs: ProofRequirements([(.medium, .review, .signed)]))
        var p = proposal("a1").proposal
        p.pinned = nil
        let events: [Payload] = [
            .deviceLinked(DeviceLink(device: "tablet", label: "Tablet", platform: .ios)),
            .policySet(policy),
            .proposed(p),
            .reviewed(Tap(contentHash: p.contentHash, policyVersion: 1)),
        ]
        try t.ledger.append(verbatim: events.enumerated().map { i, payload in
            let action = i >= 2
            let actor = i == 2 ? "specialist:Sasha" : action ? "quinn" : "operator"
            return (Event(seq: UInt64(i + 1), at: t0.adding(milliseconds: Int64(i) * 1000), actor: actor,
                          device: i == 3 ? "tablet" : nil, commandId: "c\(i)", org: "quinn-co",
                          person: i == 1 ? "operator" : "quinn", actionId: action ? "a1" : nil, payload: payload), nil)
        })
        let m = try t.ledger.replayDecisions().mismatch
        #expect(m?.seq == 4 && m?.code == "proof_required", "\(String(describing: m))")
    }
}
