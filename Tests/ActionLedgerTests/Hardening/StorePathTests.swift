import Foundation
import Testing
@testable import ActionLedger

/// A store reached by one name only, its lock file a plain file LMDB allocated in full, and
/// only a store opened as one (Storage/Environment+Paths.swift). A hostile tester lost
/// acknowledged writes through a hard link (two names, two lock files, two writers at once),
/// overwrote a file through a symbolic link as the lock file with a read-only `verify`, and
/// turned the server's sessions file into a log with `propose`.
@Suite struct StorePathTests {
    static func code(_ body: () throws -> Void) -> LedgerError.Code? {
        do { try body() } catch let e as LedgerError { return e.code } catch { return nil }
        return nil
    }

    static func sha(_ path: String) throws -> Digest {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return bytes.withUnsafeBytes { Digest.sha256($0) }
    }

    /// A second name (here a hard link; a bind mount alike, which no name can tell) means a
    /// second lock file: an open under it beside one under the first is refused, whichever
    /// comes first, and so is a write beside another name's open (its claim on the data file).
    @Test func twoOpensUnderTwoNamesAreRefused() throws {
        let t = try TempLedger()
        try t.ledger.run(.propose(proposal("a1")))
        let hard = t.directory.appendingPathComponent("hard.lmdb").path
        #expect(link(t.path, hard) == 0)
        #expect(Self.code { _ = try Ledger(path: hard) } == .invalidInput)
        #expect(Self.code { _ = try Ledger(path: hard, options: Ledger.Options(readOnly: true)) } == .invalidInput)
        try t.ledger.run(.propose(proposal("a2")))
        // Another process under the other name is refused the same way.
        let r = try LedgerProcess.run(["verify", "--db", hard])
        #expect(r.status == 2 && r.stderr.contains("another name"), "\(r.stderr)")
        // Alone, the other name opens (a hard-linked snapshot is verified, read, written).
        let dir = t.directory.appendingPathComponent("alone").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        do {
            let store = try Ledger(path: dir + "/s.lmdb")
            try store.run(.propose(proposal("s1")))
        }
        #expect(link(dir + "/s.lmdb", dir + "/snapshot.lmdb") == 0)
        do {
            let snapshot = try openWhenReleased { try Ledger(path: dir + "/snapshot.lmdb") }
            try snapshot.run(.propose(proposal("s2")))
            #expect(try snapshot.read { try $0.head().seq } == 2)
            #expect(Self.code { _ = try Ledger(path: dir + "/s.lmdb", options: Ledger.Options(readOnly: true)) } == .invalidInput)
        }
        let original = try openWhenReleased { try Ledger(path: dir + "/s.lmdb", options: Ledger.Options(readOnly: true)) }
        #expect(try original.read { try $0.head().seq } == 2)

        // A claim under another lock file made after the open (a race the open check cannot
        // close): the next write is refused as storage, nothing written.
        try t.reopen()
        let fd = open(t.path, O_RDONLY)
        defer { close(fd) }
        var l = flock()
        l.l_type = Int16(F_RDLCK)
        l.l_whence = Int16(SEEK_SET)
        l.l_start = off_t(1 << 62)
        l.l_len = 1
        #expect(fcntl(fd, 37 /* F_OFD_SETLK */, &l) == 0)
        let head = try t.ledger.read { try $0.head().seq }
        #expect(Self.code { try t.ledger.run(.propose(proposal("a3"))) } == .storage)
        #expect(try t.ledger.read { try $0.head().seq } == head)
        l.l_type = Int16(F_UNLCK)
        #expect(fcntl(fd, 37, &l) == 0)
        try t.ledger.run(.propose(proposal("a3")))
    }

    /// A lock file with a second name (two stores sharing one lock table, or a file of the
    /// user's linked there) is refused before LMDB writes into it; the file is unchanged.
    @Test func aLockFileWithTwoNamesIsRefused() throws {
        let t = try TempLedger()
        let victim = t.directory.appendingPathComponent("victim.txt").path
        try Data(repeating: 0x41, count: 20000).write(to: URL(fileURLWithPath: victim))
        let copy = t.directory.appendingPathComponent("copy.lmdb").path
        try FileManager.default.copyItem(atPath: t.path, toPath: copy)
        #expect(link(victim, copy + "-lock") == 0)
        let before = try Self.sha(victim)
        #expect(Self.code { _ = try Ledger(path: copy, options: Ledger.Options(readOnly: true)) } == .invalidInput)
        #expect(try Self.sha(victim) == before)
        // One made while a process runs refuses its next write.
        #expect(link(t.path + "-lock", t.directory.appendingPathComponent("other-lock").path) == 0)
        #expect(Self.code { try t.ledger.run(.propose(proposal("a1"))) } == .storage)
    }

    /// A symbolic link as the store opens the store it leads to, with the lock file beside
    /// it (one lock file whichever name is used); one that leads nowhere is refused, and a
    /// lock file that is a link is refused.
    @Test func aSymbolicLinkAsTheStoreLeadsToItAndOneAsItsLockFileIsRefused() throws {
        let t = try TempLedger()
        try t.ledger.run(.propose(proposal("a1")))
        let alias = t.directory.appendingPathComponent("alias.lmdb").path
        #expect(symlink(t.path, alias) == 0)
        // Beside the open handle under the store's own name: the same lock file, no conflict.
        let viaLink = try Ledger(path: alias)
        try viaLink.run(.propose(proposal("a2")))
        #expect(try t.ledger.read { try $0.head().seq } == 2)
        #expect(!FileManager.default.fileExists(atPath: alias + "-lock"))
        // The CLI too (its store check follows the link, as the open does).
        let cli = try LedgerProcess.run(["verify", "--db", alias, "--read-only"])
        #expect(cli.status == 0 && cli.stdout.contains("ok: 2 events"), "\(cli.stdout) \(cli.stderr)")
        let nowhere = t.directory.appendingPathComponent("nowhere.lmdb").path
        #expect(symlink(t.directory.appendingPathComponent("missing.lmdb").path, nowhere) == 0)
        #expect(Self.code { _ = try Ledger(path: nowhere) } == .invalidInput)
        #expect(!FileManager.default.fileExists(atPath: t.directory.appendingPathComponent("missing.lmdb").path))

        // A lock file that is a link to another file: refused, read-only too, the file unchanged.
        let victim = t.directory.appendingPathComponent("victim.txt").path
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let copy = t.directory.appendingPathComponent("copy.lmdb").path
        try FileManager.default.copyItem(atPath: t.path, toPath: copy)
        #expect(symlink(victim, copy + "-lock") == 0)
        #expect(Self.code { _ = try Ledger(path: copy, options: Ledger.Options(readOnly: true)) } == .invalidInput)
        #expect(Self.code { _ = try Ledger(path: copy) } == .invalidInput)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        // A dangling one is refused as well: nothing is created where it points.
        let dangling = t.directory.appendingPathComponent("nowhere").path
        #expect(unlink(copy + "-lock") == 0 && symlink(dangling, copy + "-lock") == 0)
        #expect(Self.code { _ = try Ledger(path: copy, options: Ledger.Options(readOnly: true)) } == .invalidInput)
        #expect(!FileManager.default.fileExists(atPath: dangling))
    }

    /// A lock file LMDB creates is sparse; touching its pages on a full disk is SIGBUS. The
    /// engine makes it itself, every block allocated, at the size LMDB would give it.
    @Test func theLockFileIsAllocatedInFull() throws {
        let t = try TempLedger()
        var info = stat()
        #expect(stat(t.path + "-lock", &info) == 0)
        #expect(Int(info.st_size) >= Environment.lockFileSize(maxReaders: Environment.Options().maxReaders))
        #expect(Int(info.st_blocks) * 512 >= Int(info.st_size))
        #expect(info.st_mode & 0o777 == 0o600)
        // A sparse one left by another program is allocated when the store is next opened.
        let copy = t.directory.appendingPathComponent("copy.lmdb").path
        try FileManager.default.copyItem(atPath: t.path, toPath: copy)
        let fd = open(copy + "-lock", O_CREAT | O_RDWR, 0o600)
        #expect(fd >= 0 && ftruncate(fd, 40960) == 0)
        close(fd)
        _ = try Ledger(path: copy, options: Ledger.Options(readOnly: true))
        #expect(stat(copy + "-lock", &info) == 0 && Int(info.st_blocks) * 512 >= 40960)
    }

    /// Another LMDB file (the server's sessions store beside the store) is no store: an opener
    /// that requires a log refuses it and writes nothing into it.
    @Test func anLMDBFileWithoutALogIsRefusedUnchanged() throws {
        let t = try TempLedger()
        let sessions = t.directory.appendingPathComponent("x.sessions.lmdb").path
        do {
            let env = try Environment(path: sessions)
            try env.write { txn in try txn.put(try #require(try txn.openDatabase("sessions", create: true)), key: Array("k".utf8), value: [1]) }
        }
        let before = try Self.sha(sessions)
        #expect(Self.code { _ = try Ledger(path: sessions, options: Ledger.Options(requireLog: true)) } == .invalidInput)
        #expect(try Self.sha(sessions) == before)
    }

    /// The CLI: a large file that is no LMDB file (an export) is "no ledger", not a damaged
    /// store, and no `-lock` is left beside it; a write command refuses an LMDB file without
    /// a log and leaves it byte-identical.
    @Test func theCLIRefusesFilesThatAreNoStore() throws {
        let p = try ProcessFixture("storepath")
        let export = p.path("export.jsonl")
        #expect(try p.ledger(["export", "--out", export]).status == 0)
        // Past a meta page's size, so the magic decides (the export here is smaller).
        try Data(repeating: 0x0A, count: 8192).write(to: URL(fileURLWithPath: p.path("big.txt")))
        for file in [export, p.path("big.txt")] {
            let before = try Self.sha(file)
            for args in [["verify", "--deep"], ["show", "a1"], ["propose", "-"], ["rebuild"], ["migrate"]] {
                let r = try p.ledger(args + ["--json"], db: file, stdin: CLITests.proposalJSON)
                #expect(r.status == 2 && r.stdout.contains("invalid_input") && r.stdout.contains("no ledger at"), "\(args): \(r.stdout)")
            }
            let after = try Self.sha(file)
            #expect(!FileManager.default.fileExists(atPath: file + "-lock") && after == before)
        }
        let sessions = p.path("l.lmdb.sessions.lmdb")
        do {
            let env = try Environment(path: sessions)
            try env.write { txn in try txn.put(try #require(try txn.openDatabase("sessions", create: true)), key: Array("k".utf8), value: [1]) }
        }
        let before = try Self.sha(sessions)
        for args in [["propose", "-"], ["migrate"], ["rebuild"], ["devices", "revoke", "x"]] {
            let r = try p.ledger(args + ["--json"], db: sessions, stdin: CLITests.proposalJSON)
            #expect(r.status == 2 && r.stdout.contains("no event log"), "\(args): \(r.stdout)")
        }
        #expect(try Self.sha(sessions) == before)
    }

    /// Paths no file can be made at are `invalid_input` before any work (an empty one had
    /// left a file named `-lock` in the working folder; a 256-byte name failed export only
    /// after the whole copy), a dangling link is "not a store" to import, and a path printed
    /// in human output is escaped like any other text.
    @Test func badPathsAreRefusedUpFrontAndPrintedEscaped() throws {
        let p = try ProcessFixture("badpaths")
        let long = p.path(String(repeating: "n", count: 256))
        for args in [["init", "--db", ""], ["init", "--db", p.path("nodir/x")], ["init", "--db", long],
                     ["export", "--out", long], ["backup", long]] {
            // In the fixture's folder: a file an empty path made would land there, not here.
            let r = try Child("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", p.dir.path, LedgerProcess.binary]
                              + args + (args[0] == "init" ? [] : ["--db", p.db])).finish(within: 60)
            #expect(r.status == 2 && r.stderr.contains("[invalid_input]"), "\(args): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: p.path("-lock")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: p.dir.path).sorted() == ["l.lmdb", "l.lmdb-lock"])
        let export = p.path("e.jsonl")
        #expect(try p.ledger(["export", "--out", export]).status == 0)
        #expect(symlink(p.path("nowhere"), p.path("dangling")) == 0)
        let dangling = try p.ledger(["import", export], db: p.path("dangling"))
        #expect(dangling.status == 2 && dangling.stderr.contains("is not a store"), "\(dangling.stderr)")
        let odd = p.path("odd\u{1B}[31m\u{202E}.lmdb")
        let created = try LedgerProcess.run(["init", "--db", odd])
        #expect(created.status == 0 && created.stdout.contains("\\u{1B}[31m\\u{202E}") && !created.stdout.contains("\u{1B}"),
                "\(created.stdout)")
        let migrate = try LedgerProcess.run(["migrate", "--db", odd])
        #expect(migrate.status == 0 && !migrate.stdout.contains("\u{202E}"), "\(migrate.stdout)")
    }

    /// A new file renamed over a store while a process keeps the old one open (`demo --fresh`
    /// beside a running server): the lock file that process holds carries the old file's
    /// transaction id, and a write from another process that opened the new file through it
    /// would build on a stale meta page and overwrite the newest commits. It is refused.
    @Test func aWriteThroughALockFileOutOfStepWithTheFileIsRefused() throws {
        let p = try ProcessFixture("instep")
        let holder = try Ledger(path: p.db)  // the "server": keeps the lock file open
        try holder.link("phone")
        // Another store, many commits ahead, renamed over the path. (Only a few ahead, its
        // transaction id could meet the holder's, which varies with the folds it commits:
        // then the write is in step, rightly accepted, and this test failed now and then.)
        let other = p.path("other.lmdb")
        try createTestClockStore(at: other)
        do {
            let l = try Ledger(path: other)
            for i in 0..<40 { try l.link("other-\(i)") }
        }
        #expect(rename(other, p.db) == 0)
        // The closed handle's claim outlives it while a child another test spawns holds a copy
        // of its descriptor (``openWhenReleased(_:)``): retried until it is gone.
        func run(_ args: [String]) throws -> LedgerProcess.Output {
            let deadline = Date().addingTimeInterval(10)
            var r = try p.ledger(args)
            while r.status == 2, (r.stderr + r.stdout).contains("another name"), Date() < deadline {
                usleep(10_000)
                r = try p.ledger(args)
            }
            return r
        }
        let before = try run(["log"]).stdout.split(separator: "\n").count
        let r = try run(["devices", "link", "late", "--person", "quinn", "--label", "L", "--platform", "cli", "--json"])
        #expect(r.status == 1 && r.stdout.contains("out of step"), "\(r.stdout)")
        #expect(try run(["log"]).stdout.split(separator: "\n").count == before)
        // The holder's own write is refused as before (its file was replaced).
        expectLedgerError(.storage) { try holder.link("tablet") }
    }

    /// `demo --fresh` over a store another process has open is refused (`busy`), nothing
    /// replaced: that process's lock file would keep the old file's transaction id for the new
    /// file's writers. Once it is gone, the store is replaced.
    @Test func demoFreshRefusesAStoreAnotherProcessHasOpen() throws {
        let p = try ProcessFixture("fresh")
        let store = p.path("demo.lmdb")
        let env = ["LEDGER_NOW": "2026-11-22T09:00:00Z"]
        #expect(try LedgerProcess.run(["demo", "--db", store, "--json"], environment: env).status == 0)
        let follower = try Child(LedgerProcess.binary, ["log", "--follow", "--db", store], environment: env)
        try waitUntil("the follower printed the log", seconds: 30) { follower.stdoutSoFar.contains("store.created") }
        let before = try StorePathTests.sha(store)
        let refused = try LedgerProcess.run(["demo", "--fresh", "--db", store], environment: env)
        #expect(refused.status == 20 && refused.stderr.contains("open in another process"), "\(refused.stderr)")
        // Refused before the day is recorded: no story told for a store that is not replaced.
        #expect(!refused.stdout.contains("events recorded") && refused.stdout.isEmpty, "\(refused.stdout)")
        #expect(try StorePathTests.sha(store) == before)
        follower.kill()
        _ = try? follower.finish(within: 30)
        #expect(try LedgerProcess.run(["demo", "--fresh", "--db", store, "--json"], environment: env).status == 0)
    }
}
