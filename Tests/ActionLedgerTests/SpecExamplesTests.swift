import Foundation
import Testing
@testable import ActionLedger

/// The engine's side of Specs/tools/validate.py: the examples the schemas accept are
/// accepted by the engine's readers, and the mutated copies the schemas must refuse are
/// refused by the engine too. Together the two keep the schemas and the code in step.
@Suite struct SpecExamplesTests {
    static let examples = ScenarioRunner.directory.deletingLastPathComponent().appendingPathComponent("schemas/examples")

    static func load(_ name: String) throws -> JSON {
        try JSONParser.parse(try Data(contentsOf: examples.appendingPathComponent(name)))
    }

    /// The same mutations as validate.py's `mutations()`.
    static func mutations(_ event: JSONObject) -> [(String, JSONObject)] {
        func m(_ what: String, _ f: (inout JSONObject) -> Void) -> (String, JSONObject) {
            var e = event
            f(&e)
            return (what, e)
        }
        func data(_ f: @escaping (inout JSONObject) -> Void) -> (inout JSONObject) -> Void {
            { e in
                guard case .object(var d)? = e["data"] else { return }
                f(&d)
                e["data"] = .object(d)
            }
        }
        guard case .object(let d)? = event["data"], case .string(let type)? = event["type"] else { return [] }
        var out = [
            m("unknown top-level field") { $0["extra"] = 1 },
            m("unknown data field", data { $0["extra"] = 1 }),
            m("schema_version 9") { $0["schema_version"] = 9 },
            m("seq 0") { $0["seq"] = 0 },
            m("bad time") { $0["at"] = "yesterday" },
            m("empty command id") { $0["command_id"] = "" },
            m("no data") { $0["data"] = nil },
        ]
        if type.hasPrefix("action.") {
            out.append(m("action event without action_id") { $0["action_id"] = nil })
            out.append(m("action_id with a space") { $0["action_id"] = "a 1" })
        } else {
            out.append(m("action_id on a non-action event") { $0["action_id"] = "a1" })
        }
        let optional: Set = ["user_verified", "assets", "price", "scheduled_for", "expires_at", "auto_ship", "user_verification", "raise"]
        for key in d.keys.sorted() where !optional.contains(key) {
            out.append(m("data without \(key)", data { $0[key] = nil }))
        }
        if d["stakes"] != nil { out.append(m("stakes 'huge'", data { $0["stakes"] = "huge" })) }
        if d["content_hash"] != nil { out.append(m("short content hash", data { $0["content_hash"] = "abc" })) }
        if d["confidence"] != nil, type == "action.proposed" { out.append(m("confidence 1.5", data { $0["confidence"] = 1.5 })) }
        return out
    }

    @Test func engineRefusesWhatTheSchemasRefuse() throws {
        let text = try String(contentsOf: SpecExamplesTests.examples.appendingPathComponent("events.jsonl"), encoding: .utf8)
        var checked = 0
        for line in text.split(separator: "\n") {
            guard case .object(let event) = try JSONParser.parse(String(line)) else { continue }
            _ = try Event(json: .object(event))
            for (what, bad) in SpecExamplesTests.mutations(event) {
                checked += 1
                expectLedgerError(.invalidInput, "\(event["type"]?.serialized() ?? "") with \(what)") { try Event(json: .object(bad)) }
            }
        }
        #expect(checked > 100)
    }

    @Test func proposalAndPolicyExamplesAreAccepted() throws {
        let input = try ProposalInput(json: try SpecExamplesTests.load("proposal-input.json"))
        #expect(input.proposal.stakes == .high && input.proposal.preview.assets == 12 && input.commandId != nil)
        let policy = try PolicyDocument(json: try SpecExamplesTests.load("policy.json"))
        #expect(policy.autoShip.dailyCap == 40 && policy.raise.count == 2 && policy.version == 0)
        #expect(try PolicyDocument(json: .object([:])) == PolicyDocument.builtIn)
        guard case .object(let p) = try SpecExamplesTests.load("proposal-input.json") else {
            Issue.record("proposal-input.json (the spec example) is not a JSON object")
            return
        }
        for key in ["action_id", "stakes", "preview", "rationale", "target"] {
            var bad = p
            bad[key] = nil
            expectLedgerError(.invalidInput, "proposal without \(key)") { try ProposalInput(json: .object(bad)) }
        }
        for (key, value) in [("stakes", JSON.string("urgent")), ("confidence", -0.1), ("surface", "only fans"),
                             ("preview", ["text": "x", "assets": 1001]), ("extra", true)] {
            var bad = p
            bad[key] = value
            expectLedgerError(.invalidInput, "proposal with \(key) = \(value.serialized())") { try ProposalInput(json: .object(bad)) }
        }
        for bad: JSON in [["user_verification": ["high", "high"]], ["auto_ship": ["confidence_floor": 2]], ["raise": [["kind": "x"]]]] {
            expectLedgerError(.invalidInput, "policy \(bad.serialized())") { try PolicyDocument(json: bad) }
        }
    }
}
