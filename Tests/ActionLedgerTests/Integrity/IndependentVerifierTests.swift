import Foundation
import Testing
@testable import ActionLedger

/// Specs/integrity.md is enough to verify an export: Specs/tools/verify_export.py,
/// written from the spec alone, agrees with the engine on every event type.
@Suite struct IndependentVerifierTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Specs/tools/verify_export.py").path

    /// `python3` as found on PATH: the one `.ci/run` and `make test` install packages for.
    static func runPython(_ args: [String]) throws -> LedgerProcess.Output {
        try Child("/usr/bin/env", ["python3"] + args).finish(within: 120)
    }

    func python(_ args: [String]) throws -> (Int32, String) {
        let r = try Self.runPython([Self.script] + args)
        return (r.signalled ? -r.status : r.status, r.stdout + r.stderr)
    }

    /// The verifier needs python3 and its `cryptography` package (for the checkpoint
    /// signature). Missing, the test fails: `.ci/run` installs both.
    @Test func aVerifierWrittenFromTheSpecAgrees() throws {
        let probe = try Self.runPython(["-c", "import cryptography"])
        try #require(probe.status == 0 && !probe.signalled,
                     "python3 with the `cryptography` package is needed (`.ci/run` installs them; by hand: python3 -m pip install cryptography): \(probe.stderr)")
        let t = try TempLedger()
        let l = t.ledger!
        try IntegrityFixtures.populate(l)
        try l.run(.propose(proposal("u1", stakes: .low, text: "Ünïcødé \"quoted\" \\ tab\t nl\n 🙂")))
        try l.run(.tap(.approve, actionId: "u1", device: "iphone"))
        try l.run(.recordOutcome(actionId: "u1", succeeded: false,
                                 outcome: ["error": "rate\u{1}limited \"x\"", "retry_in": 1.5, "n": 3, "nested": ["a": [true, .null]]]))
        // Every store `ledger serve` runs on holds token events: each scope, one revoked.
        let day = t0.adding(milliseconds: Timestamp.day)
        _ = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: day, now: t0)
        _ = try l.issueToken(org: "quinn-co", scope: .specialist, subject: "content-onlyfans", expiresAt: day, now: t0)
        let auditor = try l.issueToken(org: "quinn-co", scope: .auditor, subject: nil, expiresAt: day, now: t0)
        try l.revokeToken(auditor.record.tokenId, reason: "rotated", now: t0)
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
        // The checkpoint signature too.
        let (cpStatus, cpText) = try python([path, cpPath, pubPath])
        #expect(cpStatus == 0, "\(cpText)")
        var forged = try Checkpoint(head: head, time: t0, key: key)
        forged.logSize -= 1
        try Data(forged.json.serialized().utf8).write(to: URL(fileURLWithPath: cpPath))
        let (forgedStatus, forgedText) = try python([path, cpPath, pubPath])
        #expect(forgedStatus == 1 && forgedText.contains("InvalidSignature"), "a checkpoint with a changed log size was accepted or broke the verifier: \(forgedText)")
        // JSON has one number type: an integer spelt 2.0 is 2 to both verifiers (and the
        // chain, over canonical bytes, is unchanged).
        let respelt = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"seq\":2,", with: "\"seq\":2.0,")
        #expect(respelt != String(decoding: bytes, as: UTF8.self))
        try Data(respelt.utf8).write(to: URL(fileURLWithPath: path))
        let (respeltStatus, respeltText) = try python([path])
        #expect(respeltStatus == 0, "\(respeltText)")
        #expect(try ExportVerifier.verify(path: path).head == head)
        let exported = String(decoding: bytes, as: UTF8.self)
        // Not strict JSON (a duplicate key): both refuse it.
        try Data(exported.replacingOccurrences(of: "\"seq\":2,", with: "\"seq\":2,\"seq\":2,").utf8).write(to: URL(fileURLWithPath: path))
        let (duplicate, duplicateText) = try python([path])
        #expect(duplicate == 1 && duplicateText.contains("duplicate key"), "\(duplicateText)")
        #expect(throws: LedgerError.self) { try ExportVerifier.verify(path: path) }
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

    /// One key, one spelling (statements.md §1): a first-use link whose key is the same point
    /// compressed, fingerprint and chain recomputed, is refused by the independent verifier
    /// as the engine refuses it.
    @Test func bothVerifiersRefuseACompressedKey() throws {
        let t = try keyedStore()
        try t.ledger.linkKeyed("iphone", TestDeviceKey())
        let (path, clean) = try t.exportAndVerifyIndependently()
        #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
        let forge = """
            import hashlib, json, sys
            sys.path.insert(0, sys.argv[1])
            import verify_export as v
            from cryptography.hazmat.primitives import serialization
            lines, prev = [json.loads(l) for l in open(sys.argv[2])], bytes(32)
            for e in lines:
                k = e["data"].get("key") if e["type"] == "device.linked" else None
                if k:
                    point = serialization.load_der_public_key(bytes.fromhex(k["public_key"]))
                    compressed = point.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint)
                    der = bytes.fromhex("3039301306072a8648ce3d020106082a8648ce3d030107032200") + compressed
                    k["public_key"], k["fingerprint"] = der.hex(), hashlib.sha256(der).hexdigest()
                h = hashlib.sha256(prev + v.canonical(e)).digest()
                e["hash"], prev = h.hex(), h
            open(sys.argv[2], "w").write("".join(json.dumps(e, ensure_ascii=False) + "\\n" for e in lines))
            """
        let scripts = URL(fileURLWithPath: Self.script).deletingLastPathComponent().path
        let rewritten = try Self.runPython(["-c", forge, scripts, path])
        try #require(rewritten.status == 0, "\(rewritten.stderr)")
        let (status, text) = try python([path])
        #expect(status == 1 && text.contains("seq 3: the key is not the SPKI DER of an uncompressed P-256 point"), "\(text)")
        #expect(throws: LedgerError.self) { try ExportVerifier.verify(path: path) }
    }
}
