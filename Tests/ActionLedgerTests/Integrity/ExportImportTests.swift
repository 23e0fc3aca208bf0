import Foundation
import Testing
@testable import ActionLedger

/// Export, export verification without LMDB, and all-or-nothing import.
@Suite struct ExportImportTests {
    typealias F = IntegrityFixtures

    func exported() throws -> (TempLedger, String, [[UInt8]]) {
        let t = try TempLedger()
        try F.populate(t.ledger)
        let path = t.directory.appendingPathComponent("export.jsonl").path
        var all: [UInt8] = []
        try t.ledger.exportJSONL { all += $0 }
        try Data(all).write(to: URL(fileURLWithPath: path))
        return (t, path, all.split(separator: 0x0A).map(Array.init))
    }

    func write(_ lines: [[UInt8]], to path: String) throws {
        try Data(lines.flatMap { $0 + [0x0A] }).write(to: URL(fileURLWithPath: path))
    }

    @Test func anExportVerifiesWithoutLMDBAndImportsByteForByte() throws {
        let (t, path, lines) = try exported()
        let head = try t.ledger.read { try $0.head() }
        #expect(UInt64(lines.count) == head.seq)
        let report = try ExportVerifier.verify(path: path)
        #expect(report.head == head)
        let key = CheckpointSigningKey()
        let cp = try Checkpoint(head: head, time: t0, key: key)
        _ = try ExportVerifier.verify(path: path, checkpoint: cp)
        let copy = try TempLedger()
        #expect(try copy.ledger.importJSONL(path: path) == head)
        for seq in 1...head.seq { #expect(try F.raw(copy.ledger, seq) == F.raw(t.ledger, seq)) }
        #expect(F.failure(copy.ledger) == nil)
        // The restored store's state answers as the original's does.
        #expect(try copy.ledger.read { try $0.actionState("a1") } == t.ledger.read { try $0.actionState("a1") })
        #expect(try copy.ledger.read { try $0.policy() } == t.ledger.read { try $0.policy() })
    }

    @Test func aTamperedExportIsCaughtAtItsLine() throws {
        let (t, path, lines) = try exported()
        var edited = lines
        let text = String(decoding: lines[5], as: UTF8.self).replacingOccurrences(of: "\"quinn-co\"", with: "\"evil-co\"")
        edited[5] = Array(text.utf8)
        try write(edited, to: path)
        let v = Verdict.of { _ = try ExportVerifier.verify(path: path) }
        #expect(v == .refused(code: "integrity_failure", field: nil, line: 6))
        var dropped = lines
        dropped.remove(at: 3)
        try write(dropped, to: path)
        #expect(Verdict.of { _ = try ExportVerifier.verify(path: path) }.line == 4)
        // Truncated against a checkpoint.
        let cp = try Checkpoint(head: try t.ledger.read { try $0.head() }, time: t0, key: CheckpointSigningKey())
        try write(Array(lines.dropLast(2)), to: path)
        #expect(Verdict.of { _ = try ExportVerifier.verify(path: path) } == .accepted)
        #expect(Verdict.of { _ = try ExportVerifier.verify(path: path, checkpoint: cp) }.code == "integrity_failure")
    }

    @Test func importRefusesANonEmptyStore() throws {
        let (t, path, _) = try exported()
        let before = try F.fileDigest(t.path)
        #expect(Verdict.of { try t.ledger.importJSONL(path: path) }.code == "not_empty")
        #expect(try F.fileDigest(t.path) == before)
    }

    /// Property: any single mutated line makes the whole import fail naming that line,
    /// with the store byte-for-byte unchanged; nothing half-imported.
    @Test func aBrokenImportWritesNothingAndNamesTheLine() throws {
        let (source, path, lines) = try exported()
        defer { withExtendedLifetime(source) {} }  // its directory holds the export file
        let target = try TempLedger()
        let before = try F.fileDigest(target.path)
        var rng = SeededRandom(seed: 41)
        for i in 0..<120 {
            let k = rng.int(lines.count)
            var m = JSONMutator(rng: SeededRandom(seed: rng.next()))
            var edited = lines
            switch i % 4 {
            case 0: edited[k] = m.bytes(lines[k])
            case 1:
                // A different but well-formed event: the chain breaks at that line's hash.
                let doc = try JSONParser.parse(lines[k])
                edited[k] = Array(JSONMutator.set(doc, ["at"], "2030-01-01T00:00:00.000Z").serialized().utf8)
            case 2: edited.swapAt(k, (k + 1) % lines.count)
            default: edited.insert(lines[k], at: k)
            }
            if edited == lines { continue }
            try write(edited, to: path)
            let v = Verdict.of { try target.ledger.importJSONL(path: path) }
            #expect(v.code == "invalid_input", "#\(i): \(v)")
            #expect(v.line != nil && v.line! <= k + 2, "#\(i) mutated line \(k + 1): \(v)")
            if i % 4 == 1 { #expect(v.field == "hash" && v.line == k + 1) }
            #expect(try target.ledger.read { try $0.head() } == .empty)
        }
        #expect(try F.fileDigest(target.path) == before, "a refused import wrote to the store")
    }
}
