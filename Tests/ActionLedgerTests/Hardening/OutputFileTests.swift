import Foundation
import Testing
@testable import ActionLedger

/// What `export --out` and `backup` write: only a new file, never over the store, another
/// file or a symlink's target, and owner-only, as the store itself is.
@Suite struct OutputFileTests {
    let fixture: ProcessFixture
    init() throws { fixture = try ProcessFixture("outfile") }

    func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
    func mode(_ path: String) throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) }

    @Test func exportNeverTruncatesAnExistingFile() throws {
        try fixture.withLedger { try $0.link("iphone") }
        let store = bytes(fixture.db)
        let notes = fixture.path("notes.txt")
        try "my notes".write(toFile: notes, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: fixture.path("to-store.jsonl"), withDestinationPath: fixture.db)
        try FileManager.default.createSymbolicLink(atPath: fixture.path("dangling.jsonl"), withDestinationPath: fixture.path("nowhere"))
        for out in [fixture.db, fixture.db + "-lock", notes, fixture.path("to-store.jsonl"), fixture.path("dangling.jsonl")] {
            let refused = try fixture.ledger(["export", "--out", out])
            #expect(refused.status == LedgerError.Code.invalidInput.exitStatus, "\(out): \(refused.stderr)")
            #expect(refused.stderr.contains("already exists"))
        }
        for bad in [fixture.path("missing/e.jsonl"), fixture.dir.path + "/missing/"] {
            let refused = try fixture.ledger(["export", "--out", bad])
            #expect(refused.status == LedgerError.Code.invalidInput.exitStatus && refused.stderr.contains("existing folder"), "\(refused.stderr)")
        }
        #expect(bytes(fixture.db) == store)
        #expect(bytes(notes) == Data("my notes".utf8))
        #expect(!FileManager.default.fileExists(atPath: fixture.path("nowhere")))
        #expect(try fixture.ledger(["verify"]).status == 0)

        let out = fixture.path("e.jsonl")
        #expect(try fixture.ledger(["export", "--out", out]).status == 0)
        #expect(try fixture.ledger(["verify", "--export", out]).status == 0)
        #expect(try mode(out) == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.dir.path).filter { $0.contains(".partial-") }
        #expect(leftovers.isEmpty)
    }

    /// An export that cannot finish (here the file-size limit stops it part-way, as a full
    /// disk or a kill would) leaves no FILE, whole-looking or not, and no scratch file.
    @Test func anExportThatCannotFinishLeavesNothing() throws {
        try fixture.withLedger { l in
            try l.link("iphone")
            for i in 0..<300 { try l.run(.propose(proposal("p\(i)", text: String(repeating: "x", count: 1_000)))) }
        }
        let out = fixture.path("cut.jsonl")
        // dash's `ulimit -f` counts 512-byte blocks (64 KiB here); SIGXFSZ ignored, so the write fails with an error.
        let cut = try Child("/bin/sh", ["-c", "ulimit -f 128; trap '' XFSZ; exec \"$0\" \"$@\"",
                                        LedgerProcess.binary, "export", "--out", out, "--db", fixture.db]).finish(within: 60)
        #expect(cut.status == LedgerError.Code.storage.exitStatus, "\(cut.stdout) \(cut.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.dir.path).allSatisfy { !$0.hasPrefix("cut.jsonl") })
        #expect(try fixture.ledger(["export", "--out", out]).status == 0)
        #expect(try fixture.ledger(["verify", "--export", out]).status == 0)
    }

    /// An `init` that cannot finish (the file-size limit stops its first commit, as a full disk
    /// or a kill would) leaves nothing at the path: a file there holding no log would be refused
    /// by every command, `init` included. The next `init` makes the store and removes the
    /// scratch a killed run left.
    @Test func anInitThatCannotFinishLeavesNothingAtThePath() throws {
        let db = fixture.path("half.lmdb")
        // 40 blocks of 512 bytes: room for the lock file and the meta pages, not for the commit.
        let cut = try Child("/bin/sh", ["-c", "ulimit -f 40; trap '' XFSZ; exec \"$0\" \"$@\"",
                                        LedgerProcess.binary, "init", "--db", db]).finish(within: 60)
        #expect(cut.status == LedgerError.Code.storage.exitStatus, "\(cut.stdout) \(cut.stderr)")
        let names = { try FileManager.default.contentsOfDirectory(atPath: self.fixture.dir.path) }
        let left = try names()
        #expect(left.allSatisfy { !$0.hasPrefix("half.lmdb") && !$0.hasPrefix(".ledger-creating-") }, "\(left)")
        // What a run killed before it could clean up leaves: its scratch store, named by a gone
        // PID; one of a live process (this one's) is kept.
        let abandoned = fixture.path(".ledger-creating-999999-0badf00d"), live = fixture.path(".ledger-creating-\(getpid())-1")
        #expect(FileManager.default.createFile(atPath: abandoned, contents: Data()))
        #expect(FileManager.default.createFile(atPath: live, contents: Data()))
        // A moved store's lock file its killed run could not remove: swept too.
        let orphanLock = fixture.path(".ledger-creating-999998-0badf00d-lock")
        #expect(FileManager.default.createFile(atPath: orphanLock, contents: Data("x".utf8)))
        // Not a name a run makes (a sign before the PID): kept.
        let signed = fixture.path(".ledger-creating-+999997-1")
        #expect(FileManager.default.createFile(atPath: signed, contents: Data()))
        for p in [abandoned, live, orphanLock, signed] {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: p)
        }
        #expect(try fixture.ledger(["init", "--test-clock"], db: db).status == 0)
        #expect(!FileManager.default.fileExists(atPath: abandoned) && FileManager.default.fileExists(atPath: live))
        #expect(!FileManager.default.fileExists(atPath: orphanLock) && FileManager.default.fileExists(atPath: signed))
        #expect(FileManager.default.fileExists(atPath: db + "-lock"), "init leaves the store's lock file made")
        #expect(try fixture.ledger(["verify"], db: db).status == 0)
        #expect(try Set(names().filter { $0.hasPrefix(".ledger-creating-") }) == [".ledger-creating-\(getpid())-1", ".ledger-creating-+999997-1"])
        // A long name leaves the scratch room: it is beside the store, not named after it.
        let long = fixture.path(String(repeating: "n", count: 245))
        #expect(try fixture.ledger(["init", "--test-clock"], db: long).status == 0)
        #expect(try mode(long) == 0o600)
        // A name of one character (Foundation's path methods trapped on it), and a umask that
        // takes the owner's write bit: the store is still made, owner-only.
        let one = fixture.path("Z")
        let made = try Child("/bin/sh", ["-c", "cd \"$1\" && umask 0277 && exec \"$0\" init --db Z", LedgerProcess.binary,
                                         fixture.dir.path]).finish(within: 60)
        #expect(made.status == 0, "\(made.stderr)")
        // A production store (no --test-clock): verified without the fixture's LEDGER_NOW, which it refuses.
        #expect(try mode(one) == 0o600 && LedgerProcess.run(["verify", "--db", one]).status == 0)
        let exported = try Child("/bin/sh", ["-c", "cd \"$1\" && exec \"$0\" export --db Z --out Y", LedgerProcess.binary,
                                             fixture.dir.path]).finish(within: 60)
        #expect(exported.status == 0 && FileManager.default.fileExists(atPath: fixture.path("Y")), "\(exported.stderr)")
    }

    /// Under the usual umask (022) too: the modes are the engine's, not the umask's.
    @Test func storesBackupsAndLocksAreOwnerOnly() throws {
        let db = fixture.path("new.lmdb")
        #expect(try fixture.ledger(["init", "--test-clock"], db: db).status == 0)
        #expect(try fixture.ledger(["rebuild"], db: db).status == 0)
        let backup = fixture.path("b.lmdb")
        #expect(try fixture.ledger(["backup", backup], db: db).status == 0)
        for path in [db, db + "-lock", db + "-rebuild.lock", backup] {
            #expect(try mode(path) == 0o600, "\(path)")
        }
    }

    /// `init` makes a new store only: never through a symlink (dangling or not) or beside a
    /// planted `-lock`, so it creates or truncates no file elsewhere.
    @Test func initRefusesASymlinkOrALeftoverLock() throws {
        let target = fixture.path("elsewhere.lmdb"), link = fixture.path("link.lmdb")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try fixture.ledger(["init", "--test-clock"], db: link).status == LedgerError.Code.notEmpty.exitStatus)
        #expect(!FileManager.default.fileExists(atPath: target))
        let lockOnly = fixture.path("fresh.lmdb")
        try "keep".write(toFile: fixture.path("victim"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: lockOnly + "-lock", withDestinationPath: fixture.path("victim"))
        #expect(try fixture.ledger(["init", "--test-clock"], db: lockOnly).status == LedgerError.Code.notEmpty.exitStatus)
        #expect(bytes(fixture.path("victim")) == Data("keep".utf8) && !FileManager.default.fileExists(atPath: lockOnly))
    }

    /// A backup neither follows a planted `DEST-lock` nor leaves one: it reads its copy back
    /// without a lock file.
    @Test func aBackupNeverTouchesALockFileBesideIt() throws {
        try "keep".write(toFile: fixture.path("victim"), atomically: true, encoding: .utf8)
        let planted = fixture.path("b1.lmdb")
        try FileManager.default.createSymbolicLink(atPath: planted + "-lock", withDestinationPath: fixture.path("victim"))
        #expect(try fixture.ledger(["backup", planted]).status == LedgerError.Code.invalidInput.exitStatus)
        #expect(bytes(fixture.path("victim")) == Data("keep".utf8) && !FileManager.default.fileExists(atPath: planted))
        let clean = fixture.path("b2.lmdb")
        #expect(try fixture.ledger(["backup", clean]).status == 0)
        #expect(!NewFileProbe.exists(clean + "-lock"))
        #expect(try fixture.ledger(["verify"], db: clean).status == 0)
    }
}

/// `lstat`: whether anything, a dangling symlink included, is at a path.
enum NewFileProbe {
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }
}
