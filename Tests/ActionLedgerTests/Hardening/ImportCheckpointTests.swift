import Foundation
import Testing
@testable import ActionLedger

/// Issue 11 §1: `import --checkpoint CP --pubkey KEY` accepts an export only if it extends a
/// checkpoint the operator signed; `devices list` names each device's org.
@Suite struct ImportCheckpointTests {
    @Test func anImportMustExtendTheSignedCheckpoint() throws {
        let f = try ProcessFixture("cp-import")
        #expect(try f.ledger(["devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "P",
                              "--platform", "ios"]).status == 0)
        let list = try f.ledger(["devices", "list"])
        #expect(list.stdout.contains("iphone\tquinn\tquinn-co\tios"), "\(list.stdout)")
        let key = f.path("op")
        #expect(try f.ledger(["keygen", "--out", key]).status == 0)
        let cp = try f.ledger(["checkpoint", "--key", key + ".key"])
        #expect(cp.status == 0, "\(cp.stderr)")
        try Data(cp.stdout.utf8).write(to: URL(fileURLWithPath: f.path("cp.json")))
        let export = try f.ledger(["export"])
        try Data(export.stdout.utf8).write(to: URL(fileURLWithPath: f.path("good.jsonl")))

        // Extends it: imported, and the output says so.
        let ok = try f.ledger(["import", f.path("good.jsonl"), "--checkpoint", f.path("cp.json"), "--pubkey", key + ".pub"],
                              db: f.path("restored.lmdb"))
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("extends checkpoint"))
        // Without a checkpoint the output says the origin is unproven.
        let plain = try f.ledger(["import", f.path("good.jsonl")], db: f.path("plain.lmdb"))
        #expect(plain.stdout.contains("origin unproven"))

        // A rewritten export (the first event's label changed, every hash recomputed) does not.
        var lines = export.stdout.split(separator: "\n").map(String.init)
        var prev = Digest.zero
        for i in lines.indices {
            var event = try Event(json: JSONParser.parse(lines[i]))
            if case .deviceLinked(var d) = event.payload {
                d.label = "Forged"
                event.payload = .deviceLinked(d)
            }
            let hash = EventCodec.encode(event).withUnsafeBytes { Digest.sha256(prev, $0) }
            prev = hash
            lines[i] = StoredEvent(event: event, hash: hash).json.serialized()
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: f.path("forged.jsonl")))
        let refused = try f.ledger(["import", f.path("forged.jsonl"), "--checkpoint", f.path("cp.json"), "--pubkey", key + ".pub"],
                                   db: f.path("forged.lmdb"))
        #expect(refused.status == LedgerError.Code.integrityFailure.exitStatus, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.path("forged.lmdb")))
        // A checkpoint without its key is refused before anything is read.
        #expect(try f.ledger(["import", f.path("good.jsonl"), "--checkpoint", f.path("cp.json")],
                             db: f.path("x.lmdb")).status == LedgerError.Code.invalidInput.exitStatus)
    }
}
