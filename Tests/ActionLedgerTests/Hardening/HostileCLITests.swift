import Foundation
import Testing
@testable import ActionLedger

/// What a hostile tester found in the `ledger` CLI: a command at a path with no store
/// made one, and ids that are no identifiers reached the store (and a statement).
@Suite struct HostileCLITests {
    let fixture: ProcessFixture
    init() throws { fixture = try ProcessFixture("hostile") }

    func ledger(_ args: [String], db: String) throws -> LedgerProcess.Output {
        try LedgerProcess.run(args + ["--db", db, "--json"], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
    }

    /// Only `init` makes a store: any other command at a mistyped path is refused and
    /// leaves no file behind (it used to start a second log without `store.created`).
    @Test func noCommandButInitMakesAStore() throws {
        let typo = fixture.path("typo.lmdb")
        for args in [["approve", "a1", "--device", "phone"],
                     ["devices", "link", "d1", "--person", "p", "--org", "o", "--label", "l", "--platform", "ios"],
                     ["tokens", "issue", "--scope", "auditor", "--org", "o"], ["policy", "show"], ["log"]] {
            let out = try ledger(args, db: typo)
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stderr.contains("no ledger at"),
                    "\(args): \(out.status) \(out.stderr)")
            #expect(!FileManager.default.fileExists(atPath: typo) && !FileManager.default.fileExists(atPath: typo + "-lock"))
        }
        // An empty file or a directory is no store either (LMDB would make one of the file).
        let empty = fixture.path("empty.lmdb"), directory = fixture.path("dir.lmdb")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for path in [empty, directory] {
            for args in [["devices", "link", "d1", "--person", "p", "--org", "o", "--label", "l", "--platform", "ios"], ["log"], ["verify"]] {
                let out = try ledger(args, db: path)
                #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stdout.contains("no ledger at"), "\(args): \(out.stdout)")
            }
            #expect(!FileManager.default.fileExists(atPath: path + "-lock"))
        }
        #expect(FileManager.default.contents(atPath: empty) == Data())
        // Ids are judged before the path is: the refusal names the option, not the store.
        for (args, field) in [(["approve", "a1", "--device", "phone", "--command-id", "bad cmd"], "command_id"),
                              (["tokens", "issue", "--scope", "device", "--org", "bad org", "--device", "d"], "org"),
                              (["tokens", "issue", "--scope", "device", "--org", "o", "--device", "bad d"], "device")] {
            let out = try ledger(args, db: typo)
            #expect(out.status == 2 && out.stdout.contains(#""field":"\#(field)""#), "\(args): \(out.stdout)")
        }
        #expect(try LedgerProcess.run(["init", "--test-clock", "--db", typo], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"]).status == 0)
        #expect(try ledger(["log"], db: typo).stdout.contains("store.created"))
    }

    /// A truncated store file is reported, never read past its end (liblmdb faulted on the
    /// first page the file no longer holds: SIGBUS in every command, `verify` included).
    @Test func aTruncatedStoreIsReportedNotACrash() throws {
        let db = fixture.path("whole.lmdb")
        #expect(try LedgerProcess.run(["demo", "--db", db]).status == 0)
        let size = try #require(FileManager.default.attributesOfItem(atPath: db)[.size] as? Int)
        let cut = fixture.path("cut.lmdb")
        let bytes = try #require(FileManager.default.contents(atPath: db))
        try bytes.prefix(size / 2 / 4096 * 4096).write(to: URL(fileURLWithPath: cut))
        for args in [["verify"], ["log"], ["audit", "replay"], ["today", "--person", "quinn"]] {
            let out = try LedgerProcess.run(args + ["--db", cut, "--json"])
            #expect(out.status == LedgerError.Code.integrityFailure.exitStatus && out.stdout.contains("truncated_file"),
                    "\(args): \(out.status) \(out.stdout) \(out.stderr.prefix(200))")
        }
        #expect(try LedgerProcess.run(["verify", "--db", db]).status == 0)
    }

    /// A flipped byte in a B-tree page can make liblmdb fault (it checks no page): `verify`
    /// scans in a child process, so it reports the damage (`integrity_failure`) or finds
    /// the store whole, and never dies itself, whichever page header is hit.
    @Test func verifyReportsADamagedPageNeverCrashes() throws {
        // Not every flip faults; the check is that none kills verify.
        try eachDamagedCopy("pages", pages: 2..<14, offsets: [12, 20]) { path, at in
            let out = try LedgerProcess.run(["verify", "--db", path, "--json"])
            #expect(!out.signalled && [0, LedgerError.Code.integrityFailure.exitStatus].contains(out.status),
                    "\(at): \(out.status) \(out.stdout) \(out.stderr.prefix(200))")
        }
    }

    /// Runs `body` on copies of a demo store, each with one byte of a page header flipped
    /// (`page` × 4096 + `offset`), named by where.
    func eachDamagedCopy(_ name: String, pages: Range<Int>, offsets: [Int], _ body: (String, String) throws -> Void) throws {
        let db = fixture.path("\(name).lmdb")
        #expect(try LedgerProcess.run(["demo", "--db", db]).status == 0)
        let bytes = try #require(FileManager.default.contents(atPath: db))
        for page in pages where page < bytes.count / 4096 {
            for offset in offsets {
                var damaged = bytes
                damaged[page * 4096 + offset] ^= 0xFF
                let path = fixture.path("\(name)-\(page)-\(offset).lmdb")
                try damaged.write(to: URL(fileURLWithPath: path))
                try body(path, "page \(page)+\(offset)")
                try? FileManager.default.removeItem(atPath: path)
                try? FileManager.default.removeItem(atPath: path + "-lock")
            }
        }
    }

    /// A page that makes liblmdb fault ends any other command as a damaged store's error
    /// (`integrity_failure`, `unreadable_page`, pointing at `verify --deep`), its JSON on
    /// stdout, not as a crash.
    @Test func aFaultReadingAStoreIsReportedNotACrash() throws {
        var faulted = 0
        try eachDamagedCopy("faults", pages: 2..<34, offsets: [12, 16, 24]) { path, at in
            let out = try LedgerProcess.run(["log", "--db", path, "--json"])
            #expect(!out.signalled, "\(at): killed by a signal; \(out.stderr.suffix(300))")
            if out.stdout.contains("unreadable_page") {
                faulted += 1
                #expect(out.status == LedgerError.Code.integrityFailure.exitStatus && out.stderr.contains("verify --deep"),
                        "\(at): \(out.status) \(out.stderr)")
            }
        }
        // Flips in page headers fault liblmdb on many of these pages.
        #expect(faulted > 0)
        // A signal another process sends is no fault: it takes its default action.
        let db = fixture.path("faults.lmdb")
        let server = try Child(LedgerProcess.binary, ["serve", "--db", db, "--listen", "127.0.0.1:0"])
        let deadline = Date().addingTimeInterval(30)
        while !server.stdoutSoFar.contains("listening on"), Date() < deadline { usleep(10_000) }
        kill(server.process.processIdentifier, SIGABRT)
        let out = try server.finish(within: 30)
        #expect(out.signalled && out.status == SIGABRT && !out.stderr.contains("unreadable_page"), "\(out.status) \(out.stderr)")
    }

    /// Seqs are dense: a log missing one (its entry gone from the events database) is
    /// damage every reader reports at that seq, not a log that starts, or goes on, past it.
    /// (A rebuild had folded nothing and tried again for ever; `log` and `export` had left
    /// the event out and exited 0.)
    @Test func aMissingSeqIsReportedByEveryReader() throws {
        for gone in [UInt64(1), 5] {
            let db = fixture.path("gap-\(gone).lmdb")
            #expect(try LedgerProcess.run(["demo", "--db", db]).status == 0)
            let deleted = try Environment(path: db).write { txn throws -> Bool in
                guard let events = try txn.openDatabase("events", create: false) else { return false }
                return try txn.delete(events, key: Keys.u64(gone))
            }
            #expect(deleted)
            for args in [["log", "--json"], ["export", "--out", fixture.path("gap-\(gone).jsonl")], ["rebuild"]] {
                let out = try LedgerProcess.run(args + ["--db", db], timeout: 60)
                #expect(out.status == LedgerError.Code.integrityFailure.exitStatus && out.stderr.contains("no event at seq \(gone)"),
                        "seq \(gone), \(args[0]): \(out.status) \(out.stderr.suffix(300))")
                // What comes before the gap is still printed.
                if args[0] == "log" {
                    #expect(out.stdout.split(separator: "\n").filter { $0.hasPrefix("{\"seq\"") }.count == Int(gone) - 1,
                            "\(out.stdout.prefix(300))")
                }
            }
            // A range that stops before the gap is whole.
            if gone > 1 {
                let before = try LedgerProcess.run(["log", "--db", db, "--from", String(gone - 1), "--limit", "1", "--json"])
                #expect(before.status == 0 && before.stdout.contains("\"seq\":\(gone - 1),"), "\(before.status) \(before.stderr)")
            }
        }
    }

    /// `propose` takes `--command-id` as every write command does; refusals carry the
    /// details cli.md lists; `execute` records the operator unless told otherwise.
    @Test func proposeTakesACommandIdAndRefusalsCarryTheirDetails() throws {
        let db = fixture.path("details.lmdb")
        #expect(try LedgerProcess.run(["init", "--test-clock", "--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"]).status == 0)
        #expect(try ledger(["devices", "link", "phone", "--person", "quinn", "--org", "qco", "--label", "P", "--platform", "ios"],
                           db: db).status == 0)
        func proposal(_ id: String, _ extra: String = "") -> String {
            #"{"action_id":"\#(id)","org":"qco","person":"quinn","specialist":{"name":"S","agent":"s"},"surface":"x","kind":"k","target":{"type":"t","id":"i"},"stakes":"low","confidence":0.1,"preview":{"text":"hi","assets":0},"rationale":"r"\#(extra)}"#
        }
        let one = fixture.path("one.json")
        try proposal("a1").write(toFile: one, atomically: true, encoding: .utf8)
        #expect(try ledger(["propose", one, "--command-id", "cmd-p1"], db: db).status == 0)
        let replay = try ledger(["propose", one, "--command-id", "cmd-p1"], db: db)
        #expect(replay.status == 0 && replay.stdout.contains(#""replayed":true"#), "\(replay.stdout)")
        try proposal("a2", #","command_id":"cmd-json""#).write(toFile: one, atomically: true, encoding: .utf8)
        let differs = try ledger(["propose", one, "--command-id", "cmd-other"], db: db)
        #expect(differs.status == 2 && differs.stdout.contains(#""field":"command_id""#), "\(differs.stdout)")
        // A batch's bad line names its line and its place.
        let batch = fixture.path("batch.jsonl")
        try (proposal("b1") + "\n" + #"{"action_id":"b2"}"# + "\n").write(toFile: batch, atomically: true, encoding: .utf8)
        let bad = try ledger(["propose", "--batch", batch], db: db)
        #expect(bad.status == 2 && bad.stdout.contains(#""line":2"#) && bad.stdout.contains(#""index":1"#), "\(bad.stdout)")
        // A second revocation names the device and when it was revoked.
        #expect(try ledger(["devices", "revoke", "phone"], db: db).status == 0)
        let again = try ledger(["devices", "revoke", "phone"], db: db)
        #expect(again.stdout.contains(#""device":"phone""#) && again.stdout.contains(#""revoked_at":"#), "\(again.stdout)")
        let empty = try ledger(["approve", "a1", "--device", "phone", "--command-id", ""], db: db)
        #expect(empty.status == 2 && empty.stdout.contains(#""field":"command_id""#), "\(empty.stdout)")
        // a1 auto-shipped? No: confidence 0.1. Its outcome cannot be recorded; a3's can, by the operator.
        try proposal("a3").replacingOccurrences(of: "0.1", with: "0.99").write(toFile: one, atomically: true, encoding: .utf8)
        #expect(try ledger(["propose", one], db: db).status == 0)
        #expect(try ledger(["execute", "a3"], db: db).status == 0)
        #expect(try ledger(["log"], db: db).stdout.split(separator: "\n").last?.contains(#""actor":"operator""#) == true)
    }

    /// Device, person and org options are identifiers: a look-alike, an invisible
    /// character or a line break is refused as `invalid_input` naming the option, before
    /// the store is opened; `statement` never prints a statement with a line cut into it.
    @Test func idsThatAreNoIdentifiersAreRefusedNamingTheirOption() throws {
        let db = fixture.path("ids.lmdb")
        #expect(try LedgerProcess.run(["init", "--test-clock", "--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"]).status == 0)
        #expect(try ledger(["devices", "link", "phone", "--person", "quinn", "--org", "qco", "--label", "P", "--platform", "ios"],
                           db: db).status == 0)
        let proposal = fixture.path("p.json")
        try #"{"action_id":"a1","org":"qco","person":"quinn","specialist":{"name":"S","agent":"s"},"surface":"x","kind":"k","target":{"type":"t","id":"i"},"stakes":"medium","confidence":0.1,"preview":{"text":"hi","assets":0},"rationale":"r"}"#
            .write(toFile: proposal, atomically: true, encoding: .utf8)
        #expect(try ledger(["propose", proposal], db: db).status == 0)
        let head = try ledger(["log"], db: db).stdout
        for (args, field) in [(["review", "a1", "--device", "ph\u{043E}ne"], "device"),
                              (["review", "a1", "--device", "phone\u{200B}"], "device"),
                              (["devices", "revoke", "bad dev"], "device"),
                              (["devices", "link", "n", "--person", "quinn", "--org", "q co", "--label", "L", "--platform", "ios"], "org"),
                              (["devices", "link", "n", "--person", "quinn ", "--label", "L", "--platform", "ios"], "person"),
                              (["statement", "a1", "--step", "approve", "--device", "phone\ncommand:evil"], "device")] {
            let out = try ledger(args, db: db)
            // With --json the refusal is the only thing on stdout: no statement.
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stdout.hasPrefix(#"{"error":"#)
                    && out.stdout.contains(#""field":"\#(field)""#), "\(args): \(out.status) \(out.stdout)")
        }
        #expect(try ledger(["log"], db: db).stdout == head)
        // The library refuses it too, whoever renders the statement.
        let l = try Ledger(path: db, options: Ledger.Options(readOnly: true))
        #expect(code { _ = try l.statement(for: .tap(.approve, actionId: "a1", device: "phone\ncommand:evil"), commandId: "c1",
                                           claimedAt: at("2026-11-22T09:00:00Z")) } == .invalidInput)
    }
}
