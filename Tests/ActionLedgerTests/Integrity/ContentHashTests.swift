import Foundation
import Testing
@testable import ActionLedger

/// A recorded content hash must be the hash of the recorded preview: a re-chained export
/// or store with an altered preview would otherwise keep the old taps bound to it.
@Suite struct ContentHashTests {
    typealias F = IntegrityFixtures

    /// The fixture's export with `alter` applied to the event at `seq`, every hash after it
    /// recomputed as an attacker would (the chain is unkeyed).
    static func rechainedExport(_ t: TempLedger, seq target: UInt64, _ alter: (inout Event) -> Void) throws -> String {
        var lines: [String] = []
        var prev = Digest.zero
        try t.ledger.read { r in
            try r.forEach { stored in
                var e = stored.event
                if e.seq == target { alter(&e) }
                let hash = EventCodec.encode(e).withUnsafeBytes { Digest.sha256(prev, $0) }
                prev = hash
                lines.append(StoredEvent(event: e, hash: hash).json.serialized())
                return true
            }
        }
        let path = t.directory.appendingPathComponent("rechained-\(target).jsonl").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The seq of action `id`'s event of `type`.
    static func seq(_ l: Ledger, _ id: String, _ type: EventType) throws -> UInt64 {
        try l.read { try $0.actionEvents(id) }.first { $0.event.type == type }!.event.seq
    }

    static func alterPreview(_ e: inout Event) {
        switch e.payload {
        case .proposed(var p):
            p.preview.text = "Wire 5,000 to account 99"
            e.payload = .proposed(p)
        case .edited(var x):
            x.preview.text = "Wire 5,000 to account 99"
            e.payload = .edited(x)
        default:
            Issue.record("not a preview-bearing event")
        }
    }

    func populated() throws -> TempLedger {
        let t = try TempLedger()
        try F.populate(t.ledger)
        return t
    }

    @Test func aRechainedExportWithAnAlteredPreviewIsRefusedNamingTheSeqAndField() throws {
        let t = try populated()
        for type in [EventType.actionProposed, .actionEdited] {
            let seq = try Self.seq(t.ledger, type == .actionProposed ? "a1" : "a2", type)
            let path = try Self.rechainedExport(t, seq: seq, Self.alterPreview)
            do {
                _ = try ExportVerifier.verify(path: path)
                Issue.record("\(type): the altered export verified")
            } catch let e as LedgerError {
                #expect(e.code == .integrityFailure, "\(e)")
                #expect(F.seq(of: e) == seq)
                #expect(e.details["field"] == "content_hash")
                #expect(e.details["line"] == .number(Double(seq)))
            }
        }
    }

    @Test func importRefusesARechainedExportWithAnAlteredPreviewAndWritesNothing() throws {
        let t = try populated()
        let seq = try Self.seq(t.ledger, "a1", .actionProposed)
        let path = try Self.rechainedExport(t, seq: seq, Self.alterPreview)
        let target = try TempLedger()
        #expect {
            try target.ledger.importJSONL(path: path)
        } throws: { e in
            // Import reports refused lines as bad input; it must name this one.
            (e as? LedgerError)?.details["seq"] == .number(Double(seq))
        }
        #expect(try target.ledger.read { try $0.head() }.seq == 0)
    }

    @Test func deepVerifyCatchesARechainedStoreWithAnAlteredPreview() throws {
        let t = try populated()
        let l = t.ledger!
        let seq = try Self.seq(l, "a2", .actionEdited)
        var event = try l.read { try $0.event(seq)! }.event
        Self.alterPreview(&event)
        try F.tamper(l) { txn, events, head in
            try txn.put(events, key: Keys.u64(seq), value: Array(repeating: 0, count: 32) + EventCodec.encode(event))
            try F.rechain(txn, events, head, from: seq)
        }
        // The chain alone cannot tell (it was recomputed) ...
        #expect(F.failure(l) == nil)
        // ... the content hash can.
        let e = F.failure(l, VerifyOptions(deep: true))
        #expect(e?.code == .integrityFailure)
        #expect(F.seq(of: e) == seq)
        #expect(e?.details["field"] == "content_hash")
        #expect(e?.details["problem"] == "content_hash")
    }

    /// An edit replaces the text only (a signed one binds the content before it and the new
    /// text): one that also changes assets or price, its content hash recomputed and the
    /// chain re-chained, is refused by decision replay, import and the independent verifier.
    @Test func anEditThatChangesAssetsOrPriceIsRefused() throws {
        let t = try populated()
        let seq = try Self.seq(t.ledger, "a2", .actionEdited)
        let events = try t.ledger.read { r in try (1...(try r.head().seq)).map { try r.event($0)!.event } }
        for (what, change) in [("price", { (p: inout Preview) in p.price = 999.99 }), ("assets", { (p: inout Preview) in p.assets += 6 })] {
            var copy = events
            guard case .edited(var x) = copy[Int(seq) - 1].payload else { Issue.record("not an edit"); return }
            change(&x.preview)
            x.contentHash = EventCodec.contentHash(of: x.preview)
            copy[Int(seq) - 1].payload = .edited(x)
            let forged = try TempLedger()
            try forged.ledger.append(verbatim: copy.map { ($0, nil) })  // re-chained: every hash recomputed
            let m = try forged.ledger.replayDecisions().mismatch
            #expect(m?.seq == seq && m?.rule == "action.edit", "\(what): \(String(describing: m))")
            let (path, python) = try forged.exportAndVerifyIndependently()
            #expect(python.status == 1 && python.stdout.hasPrefix("seq \(seq): an edit changes assets or price"),
                    "\(what): \(python.stdout)\(python.stderr)")
            let target = try TempLedger()
            #expect(throws: LedgerError.self, "\(what)") { try target.ledger.importJSONL(path: path) }
            #expect(try target.ledger.read { try $0.head() }.seq == 0)
        }
    }
}
