import ActionLedger
import Foundation

/// The events the workloads write: proposals whose canonical encoding is ~250 bytes,
/// like a real one, and the same bytes for the baselines.
public enum Sample {
    /// The target encoded size of a proposal event.
    public static let eventBytes = 250
    public static let org = "bench-co"
    public static let base = Timestamp(iso8601: "2026-09-01T00:00:00Z")!

    /// Fixed-width ids keep every proposal the same size.
    public static func actionId(_ prefix: String, _ n: Int) -> String {
        let digits = String(n)
        return prefix + "-" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    public static func person(_ n: Int) -> String { "creator-\(n % 1000 + 1000)" }
    public static func device(_ n: Int) -> String { "phone-\(n % 1000 + 1000)" }

    /// A proposal of `stakes` for `person`, padded so the event encodes to ~``eventBytes``.
    public static func proposal(_ actionId: String, person: String, stakes: Stakes = .low,
                                confidence: Double = 0.5) -> ProposalInput {
        ProposalInput(actionId: actionId, org: org, person: person,
                      proposal: Proposal(specialist: Specialist(name: "Sasha", agent: "content-onlyfans"),
                                         surface: "onlyfans", kind: "publish_post",
                                         target: Target(type: "account", id: "of:\(person)"), stakes: stakes,
                                         confidence: confidence, preview: Preview(text: text, assets: 3, price: 9.99),
                                         rationale: "Fans are online now; last three posts at this hour did well",
                                         expiresAt: nil))
    }

    /// The preview text's bytes: what a proposal's content hash is computed over.
    public static let previewBytes: [UInt8] = Array(text.utf8)

    /// Preview text sized once so that a probe proposal encodes to ``eventBytes``.
    static let text: String = {
        func size(_ t: String) -> Int {
            let p = ProposalInput(actionId: actionId("act", 1), org: org, person: person(1),
                                  proposal: Proposal(specialist: Specialist(name: "Sasha", agent: "content-onlyfans"),
                                                     surface: "onlyfans", kind: "publish_post",
                                                     target: Target(type: "account", id: "of:\(person(1))"), stakes: .low,
                                                     confidence: 0.5, preview: Preview(text: t, assets: 3, price: 9.99),
                                                     rationale: "Fans are online now; last three posts at this hour did well",
                                                     expiresAt: nil))
            return encodedProposal(p).count
        }
        var t = "New set tonight"
        while size(t) < eventBytes { t += "." }
        return t
    }()

    /// The canonical bytes of `input` as a proposal event (the command id as the engine's).
    public static func encodedProposal(_ input: ProposalInput) -> [UInt8] {
        EventCodec.encode(Event(seq: 1, at: base, actor: "specialist:Sasha", commandId: CommandRequest.newCommandId(),
                                org: input.org, person: input.person, actionId: input.actionId,
                                payload: .proposed(input.proposal)))
    }

    /// A stored log value for the baselines: 32-byte hash ‖ a proposal's canonical bytes.
    public static let storedValue: [UInt8] = {
        [UInt8](repeating: 0xA5, count: 32) + encodedProposal(proposal(actionId("act", 1), person: person(1)))
    }()
}
