import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// A stream that stops reading does not make the hub keep every event for it: past its
/// backlog it is closed, and its client resumes from the log with `Last-Event-ID`.
@Suite struct SlowStreamTests {
    /// A test-clock store with quinn's phone, a hub over it (polled by hand) and an auditor.
    static func hub() throws -> (TempLedger, EventHub, Identity) {
        let t = try TempLedger()
        try t.ledger.create(StoreCreation(testClock: true, demo: false), now: t0)
        try t.ledger.link("iphone")
        let hub = try EventHub(ledger: t.ledger, pollInterval: .milliseconds(10), heartbeat: .seconds(60))
        return (t, hub, Identity(id: "tok", org: "quinn-co", scope: .auditor, subject: nil, person: nil))
    }

    @Test func aStreamTooFarBehindIsClosedNotBuffered() async throws {
        let (t, hub, who) = try Self.hub()
        let slow = hub.subscribe(who), reading = hub.subscribe(who)
        // Proposals of ~2 KiB each: 1 000 of them are past the 1 MiB backlog.
        let text = String(repeating: "x", count: 2_000)
        var appended = 0
        for batch in 0..<10 {
            try t.ledger.execute(batch: (0..<100).map { i in
                var p = proposal("p\(batch)-\(i)")
                p.proposal.preview = Preview(text: text, assets: 0)
                return CommandRequest(.propose(p), now: t0)
            })
            appended += 100
            try hub.poll()
            // The reading stream drains what it was handed, as the stream writer does.
            var drained = 0
            for await message in reading.stream {
                if case .events(let events) = message { reading.backlog.written(EventHub.bytes(events)); drained += events.count }
                if drained >= 100 { break }
            }
        }
        // The slow stream got what fitted, then ended; the reading one is still open.
        var received = 0
        for await message in slow.stream { if case .events(let events) = message { received += events.count } }
        #expect(received > 0 && received < appended, "received \(received) of \(appended)")
        #expect(reading.backlog.add(0, limit: EventHub.maxBacklog))
        hub.end(reading.id)
    }

    /// One commit larger than the backlog bound reaches a stream that is reading (nothing
    /// pending); only a stream that stopped reading is closed.
    @Test func oneLargeCommitReachesAReadingStream() async throws {
        let (t, hub, who) = try Self.hub()
        let reading = hub.subscribe(who)
        let text = String(repeating: "x", count: 2_000)
        try t.ledger.execute(batch: (0..<600).map { i in
            var p = proposal("big-\(i)")
            p.proposal.preview = Preview(text: text, assets: 0)
            return CommandRequest(.propose(p), now: t0)
        })
        try hub.poll()
        var received = 0, bytes = 0
        for await message in reading.stream {
            if case .events(let events) = message {
                received += events.count
                bytes += EventHub.bytes(events)
                reading.backlog.written(EventHub.bytes(events))
            }
            if received >= 600 { break }
        }
        #expect(received == 600 && bytes > EventHub.maxBacklog)
        #expect(reading.backlog.add(0, limit: EventHub.maxBacklog))
        hub.end(reading.id)
    }
    /// A device revoked mid-batch gets its revocation and nothing written after it, though
    /// the hub reads them in one poll (a stolen phone must not see what comes next).
    @Test func aRevokedDevicesStreamStopsAtItsRevocation() async throws {
        let (t, hub, _) = try Self.hub()
        let phone = Identity(id: "tok-phone", org: "quinn-co", scope: .device, subject: "iphone", person: "quinn")
        let live = hub.subscribe(phone)
        try t.ledger.run(.propose(proposal("before")), now: t0)
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "stolen"), now: t0)
        try t.ledger.run(.propose(proposal("after")), now: t0)
        try hub.poll()
        var seen: [String] = []
        for await message in live.stream {
            if case .events(let events) = message { seen += events.map(\.sse) }
        }
        #expect(seen.count == 2 && seen[0].contains("\"before\"") && seen[1].contains("device.revoked"), "\(seen)")
        #expect(!seen.joined().contains("\"after\""))
    }
}
