import Foundation
import Testing
@testable import ActionLedger

/// `keygen`, `checkpoint`, `verify`, `export` and `import` as operators run them.
@Suite struct IntegrityCLITests {
    typealias F = IntegrityFixtures

    @Test func keysCheckpointsAndVerificationThroughTheBinary() throws {
        let f = try ProcessFixture("icli")
        try f.withLedger { try F.populate($0) }
        let prefix = f.path("audit")
        #expect(try f.ledger(["keygen", "--out", prefix]).status == 0)
        var st = stat()
        stat(prefix + ".key", &st)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(try f.ledger(["keygen", "--out", prefix]).status == LedgerError.Code.invalidInput.exitStatus, "never overwrites a key")
        let cp = try f.ledger(["checkpoint", "--key", prefix + ".key", "--read-only"])
        #expect(cp.status == 0)
        let cpFile = f.path("cp.json")
        try Data(cp.stdout.utf8).write(to: URL(fileURLWithPath: cpFile))
        let ok = try f.ledger(["verify", "--checkpoint", cpFile, "--pubkey", prefix + ".pub", "--json"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try JSONParser.parse(ok.stdout)["ok"] == true)
        // A checkpoint without its key, or with a forged size, is refused.
        #expect(try f.ledger(["verify", "--checkpoint", cpFile]).status == LedgerError.Code.invalidInput.exitStatus)
        let forged = cp.stdout.replacingOccurrences(of: "\"log_size\":", with: "\"log_size\":1")
        try Data(forged.utf8).write(to: URL(fileURLWithPath: cpFile))
        let bad = try f.ledger(["verify", "--checkpoint", cpFile, "--pubkey", prefix + ".pub", "--json"])
        #expect(bad.status == LedgerError.Code.integrityFailure.exitStatus && bad.stdout.contains("bad_signature"), "\(bad.stdout)")
        // Export, verify it without LMDB, import it into a new store.
        let export = f.path("e.jsonl")
        #expect(try f.ledger(["export", "--out", export]).status == 0)
        #expect(try f.ledger(["verify", "--export", export]).status == 0)
        let restored = f.path("restored.lmdb")
        let imp = try f.ledger(["import", export, "--json"], db: restored)
        #expect(imp.status == 0, "\(imp.stderr)")
        #expect(try f.ledger(["verify"], db: restored).status == 0)
        #expect(try F.fileDigest(export) == {
            let again = f.path("again.jsonl")
            _ = try f.ledger(["export", "--out", again], db: restored)
            return try F.fileDigest(again)
        }(), "an import re-exports identically")
    }

    @Test func verifyNamesTheFirstBadSeqAndExitsNonZero() throws {
        let f = try ProcessFixture("icli-bad")
        try f.withLedger { l in
            try F.populate(l)
            var raw = try F.raw(l, 9)
            raw[60] ^= 4
            try F.tamper(l) { txn, events, _ in try txn.put(events, key: Keys.u64(9), value: raw) }
        }
        let r = try f.ledger(["verify", "--json"])
        #expect(r.status == LedgerError.Code.integrityFailure.exitStatus)
        let error = try JSONParser.parse(r.stdout)["error"]
        #expect(error?["code"] == "integrity_failure")
        #expect(error?["seq"] == 9)
        #expect(error?["problem"] == "hash_mismatch")
        #expect(r.stderr.contains("seq 9"))
    }
}
