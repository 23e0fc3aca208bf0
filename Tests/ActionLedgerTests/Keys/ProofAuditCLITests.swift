import Foundation
import Testing
@testable import ActionLedger

/// Proof levels in `show`, `audit action`, `audit device`, `activity`, and `audit proofs`
/// (Specs/queries.md), read from the log beside what the projections answer.
@Suite struct ProofAuditCLITests {
    let store: ProcessFixture

    init() throws { store = try ProcessFixture("proofaudit") }

    func path(_ name: String) -> String { store.path(name) }

    @discardableResult
    func ledger(_ args: String..., stdin: String? = nil) throws -> LedgerProcess.Output {
        try store.ledger(args, stdin: stdin)
    }

    /// p1 (medium): review signed by the UV-keyed iphone, approve asserted from the unkeyed
    /// tablet; p2: dismissed, signed by the iphone.
    func setUp() throws {
        #expect(try ledger("devices", "keygen", "--out", path("phone")).status == 0)
        #expect(try ledger("devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "iPhone",
                           "--platform", "ios", "--public-key", path("phone.pub"), "--key-protection", "user-verification").status == 0)
        #expect(try ledger("devices", "link", "tablet", "--person", "quinn", "--label", "Tab", "--platform", "web").status == 0)
        #expect(try ledger("propose", "-", stdin: CLITests.proposalJSON).status == 0)
        #expect(try ledger("propose", "-", stdin: CLITests.proposalJSON.replacingOccurrences(of: "\"p1\"", with: "\"p2\"")).status == 0)
        #expect(try ledger("review", "p1", "--device", "iphone", "--key", path("phone.key")).status == 0)
        #expect(try ledger("approve", "p1", "--device", "tablet", "--user-verified").status == 0)
        #expect(try ledger("dismiss", "p2", "--device", "iphone", "--key", path("phone.key")).status == 0)
    }

    static func fingerprints(_ text: String) -> Set<String> {
        Set(text.matches(of: /"key_fingerprint":"([0-9a-f]{64})"/).map { String($0.output.1) })
    }

    @Test func eachStepShowsItsLevelAndKey() throws {
        try setUp()
        let show = try ledger("show", "p1")
        #expect(show.status == 0 && show.stdout.contains("[proof signed_uv, key ") && show.stdout.contains("[proof asserted]"),
                "\(show.stdout)")
        let showJSON = try ledger("show", "p1", "--json").stdout
        #expect(showJSON.contains(#""proof_level":"signed_uv""#) && showJSON.contains(#""uv_basis":"declared_key_protection""#))
        let key = Self.fingerprints(showJSON)
        #expect(key.count == 1)
        let trail = try ledger("audit", "action", "p1", "--json").stdout
        #expect(trail.contains(#""proof_level":"asserted","key_fingerprint":null"#) && Self.fingerprints(trail) == key, "\(trail)")
        // The proposal is no device's step: its proof members are null.
        #expect(trail.contains(#""proof_level":null"#))
        let csv = try ledger("audit", "action", "p1", "--csv").stdout
        #expect(csv.hasPrefix("seq,type,") && csv.split(separator: "\n")[0].hasSuffix(",proof_level,key_fingerprint"))
        #expect(csv.contains(",signed_uv,\(key.first ?? "-")"))
        let device = try ledger("audit", "device", "iphone", "--json").stdout
        #expect(device.components(separatedBy: #""proof_level":"signed_uv""#).count == 3 && Self.fingerprints(device) == key)
        #expect(try ledger("audit", "device", "tablet").stdout.contains("[proof asserted]"))
        let activity = try ledger("activity", "--person", "quinn", "--json").stdout
        #expect(activity.contains(#""proof_level":"asserted""#) && Self.fingerprints(activity) == key)
    }

    @Test func auditProofsCountsDecisionsAndListsAssertions() throws {
        try setUp()
        let r = try ledger("audit", "proofs", "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONParser.parse(r.stdout)
        #expect(report["decisions"] == 2)
        #expect(report["by_level"] == ["none": 0, "asserted": 1, "signed": 0, "signed_uv": 1])
        guard case .array(let unproven)? = report["unproven"] else { Issue.record("no unproven list"); return }
        #expect(unproven.count == 1 && unproven.first?["action_id"] == "p1" && unproven.first?["device"] == "tablet")
        let human = try ledger("audit", "proofs").stdout
        #expect(human.contains("asserted 1") && human.contains("action.approved p1 by quinn on tablet: asserted"), "\(human)")
        // A window before the decisions holds none.
        let empty = try JSONParser.parse(try ledger("audit", "proofs", "--to", "2026-11-22T08:00:00Z", "--json").stdout)
        #expect(empty["decisions"] == 0 && empty["unproven"] == .array([]))
    }

    /// A signature by a key not declared `user-verification`, with the approval claiming
    /// Face ID: signed, so not among the assertions, but listed apart as unproven user verification.
    @Test func aSignedApprovalClaimingUnprovenUserVerificationIsListedApart() throws {
        try setUp()
        #expect(try ledger("devices", "keygen", "--out", path("laptop")).status == 0)
        #expect(try ledger("devices", "link", "laptop", "--person", "quinn", "--label", "MBP", "--platform", "web",
                           "--public-key", path("laptop.pub"), "--key-protection", "device", "--introduced-by", "iphone", "--key", path("phone.key")).status == 0)
        #expect(try ledger("propose", "-", stdin: CLITests.proposalJSON.replacingOccurrences(of: "\"p1\"", with: "\"p3\"")).status == 0)
        #expect(try ledger("review", "p3", "--device", "laptop", "--key", path("laptop.key")).status == 0)
        let approved = try ledger("approve", "p3", "--device", "laptop", "--key", path("laptop.key"), "--user-verified")
        #expect(approved.status == 0, "\(approved.stderr)")
        let report = try JSONParser.parse(try ledger("audit", "proofs", "--json").stdout)
        #expect(report["by_level"]?["signed"] == 1)
        guard case .array(let claimed)? = report["user_verification_unproven"] else { Issue.record("no list: \(report)"); return }
        #expect(claimed.count == 1 && claimed.first?["action_id"] == "p3" && claimed.first?["proof_level"] == "signed", "\(claimed)")
        #expect(try ledger("audit", "proofs").stdout.contains("user verification claimed, unproven (1)"))
    }
}
