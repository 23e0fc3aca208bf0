import Foundation
import Testing
@testable import ActionLedger

/// The JSON form of every event type round-trips, and Specs/schemas/examples/events.jsonl
/// is exactly what the engine writes (so the examples the schemas are checked against by
/// Specs/tools/validate.py stay true to the code).
@Suite struct EventJSONTests {
    static let examples = ScenarioRunner.directory.deletingLastPathComponent()
        .appendingPathComponent("schemas/examples/events.jsonl")

    /// A small day in which every event type occurs, made through the engine.
    static func sampleLedger() throws -> TempLedger {
        let temp = try TempLedger()
        let l = temp.ledger!
        func at(_ minute: Int) -> Timestamp { t0.adding(milliseconds: Int64(minute) * 60_000) }
        func run(_ c: Command, _ minute: Int, _ id: String) throws { try l.run(c, now: at(minute), commandId: id) }
        try l.create(StoreCreation(testClock: true, demo: false), now: t0, commandId: "cmd-create")
        try run(.linkDevice(device: "iphone", person: "quinn", org: "quinn-co", label: "iPhone · Quinn", platform: .ios),
                0, "cmd-link-iphone")
        try run(.linkDevice(device: "laptop", person: "quinn", org: "quinn-co", label: "Desktop · transquinnftw-MBP",
                            platform: .web), 1, "cmd-link-laptop")
        try run(.setPolicy(PolicyDocument(autoShip: .init(confidenceFloor: 0.85, dailyCap: 40), userVerification: [.high],
                                          raise: [.init(kind: "send_dm", surface: "x", stakes: .high),
                                                  .init(surface: "tiktok", stakes: .medium)]),
                           org: "quinn-co"), 2, "cmd-policy-1")
        var high = proposal("of-ppv-1", stakes: .high, confidence: 0.74, text: "Full set, 40% off tonight only")
        high.proposal.scheduledFor = at(600)
        high.proposal.expiresAt = at(900)
        try run(.propose(high), 3, "cmd-propose-1")
        try run(.tap(.review, actionId: "of-ppv-1", device: "iphone"), 4, "cmd-review-1")
        try run(.edit(actionId: "of-ppv-1", device: "iphone", text: "Full set, 30% off tonight only"), 5, "cmd-edit-1")
        try run(.tap(.review, actionId: "of-ppv-1", device: "iphone"), 6, "cmd-review-2")
        try run(.tap(.confirm, actionId: "of-ppv-1", device: "laptop"), 7, "cmd-confirm-1")
        try run(.tap(.approve, actionId: "of-ppv-1", device: "iphone", userVerified: true), 8, "cmd-approve-1")
        try run(.recordOutcome(actionId: "of-ppv-1", succeeded: true, outcome: ["post_id": "of-98765"]), 9, "cmd-outcome-1")
        try run(.propose(proposal("x-reply-1", stakes: .low, confidence: 0.91, kind: "send_reply", surface: "x", text: "Thank you!!")),
                10, "cmd-propose-2")
        try run(.recordOutcome(actionId: "x-reply-1", succeeded: false, outcome: ["error": "rate limited", "retry_after_s": 60]),
                11, "cmd-outcome-2")
        try run(.propose(proposal("ig-story-1", stakes: .medium, text: "Behind the scenes")), 12, "cmd-propose-3")
        try run(.hold(actionId: "ig-story-1", device: "laptop", until: at(240)), 13, "cmd-hold-1")
        try run(.dismiss(actionId: "ig-story-1", device: "laptop", reason: "Not this week"), 14, "cmd-dismiss-1")
        try run(.propose(proposal("of-dm-1", stakes: .medium, kind: "send_dm", text: "Hey!", expiresAt: at(20))), 15, "cmd-propose-4")
        try run(.expire(actionId: "of-dm-1"), 30, "cmd-expire-1")
        try run(.revokeDevice(device: "laptop", reason: "Laptop sold"), 31, "cmd-revoke-1")
        try run(.setRelyingParty(try RelyingParty(rpId: "ledger.example.com", origins: ["https://ledger.example.com"])), 32, "cmd-rp-1")
        var seeded = SeededRandom(seed: 14)
        let token = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: at(60 * 24 * 30), now: at(33),
                                     commandId: "cmd-token-1", random: &seeded)
        try l.revokeToken(token.record.tokenId, reason: "Phone replaced", now: at(34), commandId: "cmd-token-revoke-1")
        return temp
    }

    @Test func everyEventTypeRoundTrips() throws {
        let temp = try EventJSONTests.sampleLedger()
        var seen = Set<EventType>()
        try temp.ledger.read { reader in
            try reader.forEach { stored in
                let e = stored.event
                seen.insert(e.type)
                // JSON form: printed, parsed by the strict parser, read back: the same event.
                let text = e.json(hash: stored.hash).serialized()
                let back = try Event(json: try JSONParser.parse(text))
                #expect(back == e, "\(e.type) seq \(e.seq) changed through JSON: \(text)")
                #expect(back.json(hash: stored.hash).serialized() == text)
                // Canonical bytes: decode(encode(e)) == e, and re-encoding gives identical bytes.
                let bytes = EventCodec.encode(e)
                let decoded = try bytes.withUnsafeBytes { try EventCodec.decode($0) }
                #expect(decoded == e)
                #expect(EventCodec.encode(decoded) == bytes)
                #expect(EventCodec.encode(back) == bytes, "\(e.type): JSON round trip changed the canonical bytes")
                return true
            }
        }
        // Key rotations, recorded refusals and recovery keys carry random ECDSA keys and
        // signatures: SignedExportTests' export has them.
        let unsigned = Set(EventType.allCases).subtracting([.deviceKeyRotated, .tapRefused, .personRecoveryKeySet])
        #expect(seen == unsigned, "missing from the sample: \(unsigned.subtracting(seen))")
    }

    @Test func examplesFileIsWhatTheEngineWrites() throws {
        let temp = try EventJSONTests.sampleLedger()
        var lines: [String] = []
        try temp.ledger.read { reader in
            try reader.forEach { lines.append($0.event.json(hash: $0.hash).serialized()); return true }
        }
        let expected = lines.joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["ACTIONLEDGER_WRITE_EXAMPLES"] == "1" {
            try expected.write(to: EventJSONTests.examples, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOf: EventJSONTests.examples, encoding: .utf8)
        #expect(committed == expected, "Specs/schemas/examples/events.jsonl is stale: rerun with ACTIONLEDGER_WRITE_EXAMPLES=1")
        // And it imports: verbatim append checks every hash of the chain.
        let fresh = try TempLedger()
        let events = try committed.split(separator: "\n").map { line -> (Event, Digest?) in
            let json = try JSONParser.parse(String(line))
            return (try Event(json: json), json["hash"].flatMap { if case .string(let h) = $0 { Digest(hex: h) } else { nil } })
        }
        try fresh.ledger.append(verbatim: events)
        #expect(try fresh.ledger.read { try $0.head().seq } == UInt64(lines.count))
    }

    @Test func actionIdIsRequiredExactlyOnActionEvents() throws {
        let temp = try EventJSONTests.sampleLedger()
        let (review, link) = try temp.ledger.read { r in (try r.event(6)!.event, try r.event(2)!.event) }
        #expect(review.type == .actionReviewed && link.type == .deviceLinked)
        guard case .object(var noId) = review.json() else { Issue.record("review.json() is not an object"); return }
        noId["action_id"] = nil
        expectLedgerError(.invalidInput) { try Event(json: .object(noId)) }
        guard case .object(var withId) = link.json() else { Issue.record("link.json() is not an object"); return }
        withId["action_id"] = "a1"
        expectLedgerError(.invalidInput) { try Event(json: .object(withId)) }
        guard case .object(var badId) = review.json() else { Issue.record("review.json() is not an object"); return }
        badId["action_id"] = "a 1"
        expectLedgerError(.invalidInput) { try Event(json: .object(badId)) }
    }

    @Test func verbatimCommandIdsMustBeConsecutive() throws {
        let source = try EventJSONTests.sampleLedger()
        var events = try source.ledger.read { r in try (1...3).map { try r.event($0)!.event } }
        events[2].commandId = events[0].commandId  // seq 3 reuses seq 1's command id across seq 2
        let fresh = try TempLedger()
        expectLedgerError(.invalidInput) { try fresh.ledger.append(verbatim: events.map { ($0, nil) }) }
        #expect(try fresh.ledger.read { try $0.head().seq } == 0, "nothing half-written")
    }
}
