import Foundation
import Testing
@testable import ActionLedger

/// Specs/integrity.md is enough to verify an export: Specs/tools/verify_export.py,
/// written from the spec alone, agrees with the engine on every event type.
@Suite struct IndependentVerifierTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Specs/tools/verify_export.py").path

    func python(_ args: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [Self.script] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    @Test func aVerifierWrittenFromTheSpecAgrees() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return }
        let t = try TempLedger()
        let l = t.ledger!
        try IntegrityFixtures.populate(l)
        try l.run(.propose(proposal("u1", stakes: .low, text: "Ünïcødé \"quoted\" \\ tab\t nl\n 🙂")))
        try l.run(.tap(.approve, actionId: "u1", device: "iphone"))
        try l.run(.recordOutcome(actionId: "u1", succeeded: false,
                                 outcome: ["error": "rate\u{1}limited \"x\"", "retry_in": 1.5, "n": 3, "nested": ["a": [true, .null]]]))
        let head = try l.read { try $0.head() }
        let path = t.directory.appendingPathComponent("e.jsonl").path
        var bytes: [UInt8] = []
        try l.exportJSONL { bytes += $0 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let key = CheckpointSigningKey()
        let cpPath = t.directory.appendingPathComponent("cp.json").path, pubPath = t.directory.appendingPathComponent("k.pub").path
        try Data(try Checkpoint(head: head, time: t0, key: key).json.serialized().utf8).write(to: URL(fileURLWithPath: cpPath))
        try Data(key.publicKey.json.serialized().utf8).write(to: URL(fileURLWithPath: pubPath))
        let (status, text) = try python([path])
        #expect(status == 0, "\(text)")
        #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == "ok \(head.seq) \(head.hash.hex)")
        // The checkpoint signature too, where Python's `cryptography` package is installed.
        let (cpStatus, cpText) = try python([path, cpPath, pubPath])
        if !cpText.contains("No module named 'cryptography'") {
            #expect(cpStatus == 0, "\(cpText)")
            var forged = try Checkpoint(head: head, time: t0, key: key)
            forged.logSize -= 1
            try Data(forged.json.serialized().utf8).write(to: URL(fileURLWithPath: cpPath))
            #expect(try python([path, cpPath, pubPath]).0 != 0)
        }
        // And it catches what the engine catches.
        let tampered = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "not this week", with: "not this year")
        try Data(tampered.utf8).write(to: URL(fileURLWithPath: path))
        let (bad, badText) = try python([path])
        #expect(bad == 1 && badText.contains("hash mismatch"), "\(badText)")
    }
}

extension IndependentVerifierTests {
    /// Both verifiers refuse a re-chained export whose preview no longer matches its
    /// recorded content hash, and name the same seq.
    @Test func bothVerifiersRefuseAnAlteredPreviewUnderARecomputedChain() throws {
        let t = try TempLedger()
        try IntegrityFixtures.populate(t.ledger)
        let seq = try ContentHashTests.seq(t.ledger, "a1", .actionProposed)
        let path = try ContentHashTests.rechainedExport(t, seq: seq, ContentHashTests.alterPreview)
        let (status, text) = try python([path])
        #expect(status == 1 && text.contains("seq \(seq): content_hash mismatch"), "\(text)")
        #expect(throws: LedgerError.self) { try ExportVerifier.verify(path: path) }
    }
}
