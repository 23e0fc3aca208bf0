import Foundation
import Testing
@testable import ActionLedger

/// One event of every type, with every optional field both set and absent somewhere.
let sampleEvents: [Event] = {
    let p = proposal("a1", stakes: .high, confidence: 0.875, expiresAt: at("2026-11-23T00:00:00Z")).proposal
    var bare = proposal("a2", stakes: .low).proposal
    bare.preview.price = nil
    let h = p.contentHash
    let payloads: [Payload] = [
        .proposed(p), .proposed(bare), .reviewed(Tap(contentHash: h, policyVersion: 0)),
        .confirmed(Tap(contentHash: h, policyVersion: 3)),
        .approved(Approval(contentHash: h, policyVersion: 3, rule: "high.three_taps", stakes: .high, userVerified: true)),
        .autoShipped(AutoShip(contentHash: h, policyVersion: 1, rule: "auto_ship.low_confident", confidence: 0.91)),
        .dismissed(Dismissal(reason: "off-brand ✂️", policyVersion: 2)), .held(Hold(until: at("2026-11-22T18:00:00Z"))),
        .edited(Edit(preview: Preview(text: "new caption", assets: 2, price: nil))),
        .executed(Outcome(outcome: #"{"device":"laptop","url":"https://x.test/1"}"#)), .failed(Outcome(outcome: #"{"error":"429"}"#)),
        .expired, .deviceLinked(DeviceLink(device: "iphone", label: "iPhone · Quinn", platform: .ios)),
        .deviceRevoked(DeviceRevocation(device: "iphone", reason: "")),
        .policySet(PolicyDocument(version: 4, autoShip: .init(enabled: false, confidenceFloor: 0.9, dailyCap: 7),
                                  userVerification: [.medium, .high], raise: [.init(kind: "send_dm", surface: nil, stakes: .high)])),
    ]
    return payloads.enumerated().map { i, payload in
        Event(seq: UInt64(i + 1), at: t0.adding(milliseconds: Int64(i) * 1001), actor: i % 2 == 0 ? "quinn" : "system:policy",
              device: i % 3 == 0 ? nil : "iphone", commandId: "cmd-\(i)", org: "quinn-co", person: "quinn",
              actionId: payload.type.name.hasPrefix("action.") ? "a1" : nil, payload: payload)
    }
}()

@Suite struct CodecTests {
    @Test(arguments: sampleEvents)
    func binaryRoundTripIsExact(event: Event) throws {
        let bytes = EventCodec.encode(event)
        let decoded = try bytes.withUnsafeBytes { try EventCodec.decode($0) }
        #expect(decoded == event)
        #expect(EventCodec.encode(decoded) == bytes)
        #expect(bytes.withUnsafeBytes { EventCodec.seq(of: $0) } == event.seq)
    }

    @Test(arguments: sampleEvents)
    func jsonRoundTripIsExact(event: Event) throws {
        let text = event.json().serialized()
        let back = try Event(json: try JSONParser.parse(text))
        #expect(back == event)
        #expect(EventCodec.encode(back) == EventCodec.encode(event))
    }

    @Test func everyTruncationIsRefused() throws {
        for event in sampleEvents {
            let bytes = EventCodec.encode(event)
            for n in 0..<bytes.count {
                expectLedgerError(.corruptEvent) { try Array(bytes[..<n]).withUnsafeBytes { try EventCodec.decode($0) } }
            }
        }
    }

    @Test func nonCanonicalBytesAreRefused() throws {
        let bytes = EventCodec.encode(sampleEvents[0])
        let cases: [(String, [UInt8])] = [
            ("trailing byte", bytes + [0]),
            ("unknown format", [9] + bytes.dropFirst()),
            ("unknown type", [bytes[0], 99] + bytes.dropFirst(2)),
            ("future schema version", [bytes[0], bytes[1], 2] + bytes.dropFirst(3)),
        ]
        for (name, b) in cases {
            let error = try requireLedgerError(.corruptEvent, "\(name)") { try b.withUnsafeBytes { try EventCodec.decode($0) } }
            #expect(error.code == .corruptEvent)
        }
        // A varint with a redundant continuation byte decodes to the same number but is not canonical.
        var r = BinaryReader(UnsafeRawBufferPointer(start: nil, count: 0))
        let padded: [UInt8] = [0x85, 0x00]
        padded.withUnsafeBytes { r = BinaryReader($0); expectLedgerError(.corruptEvent) { try r.varint() } }
    }

    @Test func unknownSchemaVersionInJSONIsRefused() throws {
        var o = try #require({ if case .object(let o) = sampleEvents[2].json() { return o } else { return nil } }())
        o["schema_version"] = 9
        let error = try requireLedgerError(.invalidInput) { try Event(json: .object(o)) }
        #expect(error.message.contains("schema_version"))
    }

    @Test func contentHashCoversEveryPreviewField() {
        let base = Preview(text: "hi", assets: 1, price: 5)
        let hashes = Set([base, Preview(text: "hi!", assets: 1, price: 5), Preview(text: "hi", assets: 2, price: 5),
                          Preview(text: "hi", assets: 1, price: nil), Preview(text: "hi", assets: 1, price: 5.01)]
            .map(EventCodec.contentHash(of:)))
        #expect(hashes.count == 5)
    }
}
