import Foundation
import Testing
@testable import ActionLedger

/// Property-based hostile input through the engine's parsers: every mutation of a valid
/// document is either accepted or refused as `invalid_input` naming the field (or line),
/// never anything else, and structured mutations name exactly the field they broke.
@Suite struct HostileInputTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["FUZZ_ITERATIONS"] ?? "") ?? 400

    static let proposalDoc: JSON = try! JSONParser.parse(#"""
        {"action_id":"p1","org":"quinn-co","person":"quinn","command_id":"c-1",
         "specialist":{"name":"Sasha","agent":"content-onlyfans"},"surface":"onlyfans","kind":"publish_post",
         "target":{"type":"account","id":"of:quinn"},"stakes":"medium","confidence":0.7,
         "preview":{"text":"New set","assets":3,"price":9.99},"rationale":"peak hour",
         "scheduled_for":"2026-11-22T20:00:00Z","expires_at":"2026-11-23T20:00:00Z"}
        """#)

    static let policy: JSON = try! JSONParser.parse(#"""
        {"version":1,"auto_ship":{"enabled":true,"confidence_floor":0.85,"daily_cap":20},
         "user_verification":["high"],"raise":[{"kind":"price_change","stakes":"high"}]}
        """#)

    /// Runs the structured and byte-level properties against one parser.
    func properties(_ name: String, _ doc: JSON, seed: UInt64, skip: [String] = [],
                    _ parse: ([UInt8]) throws -> Void) {
        var m = JSONMutator(rng: SeededRandom(seed: seed))
        let paths = JSONMutator.paths(doc, skip: skip)
        let valid = Array(doc.serialized().utf8)
        #expect(Verdict.of { try parse(valid) } == .accepted, "\(name): the base document must be valid")
        var refused = 0
        defer { #expect(refused > Self.iterations / 2, "\(name): only \(refused) mutations were refused") }
        for i in 0..<Self.iterations {
            let path = paths[m.rng.int(paths.count)]
            let dotted = path.joined(separator: ".")
            let kind = m.rng.int(5)
            var mutated: JSON
            switch kind {
            case 0: mutated = JSONMutator.set(doc, path, m.otherType(JSONMutator.get(doc, path)!))
            case 1: mutated = JSONMutator.set(doc, path, nil)
            case 2: mutated = JSONMutator.set(doc, path.dropLast() + ["zz_unknown"], 1)
            case 3:
                guard case .string? = JSONMutator.get(doc, path) else { continue }
                mutated = JSONMutator.set(doc, path, m.hugeString())
            default:
                let bytes = m.bytes(valid)
                let v = Verdict.of { try parse(bytes) }
                #expect(v == .accepted || v.code == "invalid_input", "\(name) #\(i) seed \(seed): bytes gave \(v)")
                if v != .accepted { refused += 1 }
                continue
            }
            let v = Verdict.of { try parse(Array(mutated.serialized().utf8)) }
            if v != .accepted { refused += 1 }
            let expected = kind == 2 ? (path.dropLast() + ["zz_unknown"]).joined(separator: ".") : dotted
            if kind == 1 {
                // Removing an optional field is fine; removing a required one names it.
                #expect(v == .accepted || (v.code == "invalid_input" && v.field == expected),
                        "\(name) #\(i): removing \(dotted) gave \(v)")
            } else {
                #expect(v.code == "invalid_input" && v.field == expected, "\(name) #\(i) kind \(kind): \(dotted) gave \(v)")
            }
        }
    }

    @Test func proposalsRefuseEveryMutationByField() {
        properties("proposal", Self.proposalDoc, seed: 11) { try _ = ProposalInput(json: JSONParser.parse($0)) }
    }

    @Test func policiesRefuseEveryMutationByField() {
        properties("policy", Self.policy, seed: 12) { try _ = PolicyDocument(json: JSONParser.parse($0)) }
    }

    @Test func confidenceAndNumbersOutOfRangeAreRefused() {
        let base = Self.proposalDoc.serialized()
        for bad in ["NaN", "Infinity", "-Infinity", "1e400", "-0.0001", "1.0000001", "2", "-1e308", "\"0.5\"", "null", "0x1", "1e-400", "-1e-400"] {
            let text = base.replacingOccurrences(of: "\"confidence\":0.7", with: "\"confidence\":\(bad)")
            let v = Verdict.of { try _ = ProposalInput(json: JSONParser.parse(text)) }
            #expect(v.code == "invalid_input", "confidence \(bad): \(v)")
        }
        for bad in ["-1", "1.5", "1001", "1e9"] {
            let text = base.replacingOccurrences(of: "\"assets\":3", with: "\"assets\":\(bad)")
            #expect(Verdict.of { try _ = ProposalInput(json: JSONParser.parse(text)) }.field == "preview.assets")
        }
        for bad in ["-0.5", "1e7", "1.7976931348623157e308"] {
            let text = base.replacingOccurrences(of: "\"price\":9.99", with: "\"price\":\(bad)")
            #expect(Verdict.of { try _ = ProposalInput(json: JSONParser.parse(text)) }.field == "preview.price")
        }
    }

    @Test func exportLinesRefuseEveryMutationByLineAndField() throws {
        let t = try TempLedger()
        try IntegrityFixtures.populate(t.ledger)
        var lines: [[UInt8]] = []
        try t.ledger.exportJSONL { chunk in lines += chunk.split(separator: 0x0A).map(Array.init) }
        var rng = SeededRandom(seed: 13)
        for i in 0..<Self.iterations {
            let k = rng.int(lines.count)
            let doc = try JSONParser.parse(lines[k])
            let seed = rng.next()
            var m = JSONMutator(rng: SeededRandom(seed: seed))
            let paths = JSONMutator.paths(doc, skip: ["data.outcome"])
            let path = paths[m.rng.int(paths.count)]
            var mutatedLine: [UInt8]
            var expectField: String?
            switch m.rng.int(4) {
            case 0:
                mutatedLine = Array(JSONMutator.set(doc, path, m.otherType(JSONMutator.get(doc, path)!)).serialized().utf8)
                expectField = path.joined(separator: ".")
            case 1:
                mutatedLine = Array(JSONMutator.set(doc, path.dropLast() + ["zz_unknown"], 1).serialized().utf8)
                expectField = (path.dropLast() + ["zz_unknown"]).joined(separator: ".")
            case 2:
                let weird: [(String, JSON)] = [("type", "action.teleported"), ("schema_version", 9), ("seq", 0), ("hash", "00")]
                let (f, v) = weird[m.rng.int(weird.count)]
                mutatedLine = Array(JSONMutator.set(doc, [f], v).serialized().utf8)
                expectField = f
            default:
                mutatedLine = m.bytes(lines[k])
            }
            var file = lines
            file[k] = mutatedLine
            var verifier = ExportVerifier()
            let v = Verdict.of { for l in file { _ = try verifier.next(l) } }
            if expectField == "seq" {
                // seq 0 is out of range for the field itself.
                #expect(v.code == "invalid_input" && v.line == k + 1, "#\(i) seed \(seed): \(v)")
            } else if let expectField {
                #expect(v.code == "invalid_input" && v.field == expectField && v.line == k + 1, "#\(i) seed \(seed): \(v)")
            } else {
                // Any byte change breaks the JSON, a field, or the chain — at that line.
                #expect((v.code == "invalid_input" || v.code == "integrity_failure") && v.line == k + 1,
                        "#\(i) seed \(seed) line \(k + 1): bytes gave \(v)")
            }
        }
    }

    @Test func revokedAndForeignDevicesCannotTap() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        try l.link("riley-phone", person: "riley")
        try l.link("lost-phone")
        try l.run(.revokeDevice(device: "lost-phone", reason: "lost"))
        try l.run(.propose(proposal("a1", stakes: .low)))
        let before = try l.read { try $0.head() }
        for step in TapStep.allCases {
            #expect(Verdict.of { try l.run(.tap(step, actionId: "a1", device: "lost-phone")) }.code == "device_revoked")
            #expect(Verdict.of { try l.run(.tap(step, actionId: "a1", device: "riley-phone")) }.code == "device_not_owned")
        }
        #expect(Verdict.of { try l.run(.dismiss(actionId: "a1", device: "lost-phone", reason: "x")) }.code == "device_revoked")
        #expect(Verdict.of { try l.run(.dismiss(actionId: "a1", device: "riley-phone", reason: "x")) }.code == "device_not_owned")
        #expect(try l.read { try $0.head() } == before)
        #expect(try l.read { try $0.actionState("a1") }?.status == .pending)
    }
}
