import Foundation
import Testing
@testable import ActionLedger

/// Names another user can plant beside a store in a shared folder: a link at the rebuild's
/// lock file, a lock file of their own. Neither is followed or used.
@Suite struct PlantedNameTests {
    let fixture: ProcessFixture
    init() throws { fixture = try ProcessFixture("planted") }

    /// A link at `PATH-rebuild.lock` had the rebuild create a file wherever it led, as whoever
    /// ran it: refused, and nothing is made at its target.
    @Test func aLinkAtTheRebuildLockIsRefused() throws {
        let target = fixture.path("elsewhere/made-by-the-rebuild")
        try FileManager.default.createDirectory(atPath: fixture.path("elsewhere"), withIntermediateDirectories: true)
        #expect(symlink(target, fixture.db + "-rebuild.lock") == 0)
        for args in [["rebuild"], ["migrate"]] {
            let out = try fixture.ledger(args)
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stderr.contains("symbolic link"),
                    "\(args): \(out.status) \(out.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: target))
        unlink(fixture.db + "-rebuild.lock")
        // A folder there is no plain file either (it had been a storage_error, "Is a directory").
        #expect(mkdir(fixture.db + "-rebuild.lock", 0o700) == 0)
        let folder = try fixture.ledger(["rebuild"])
        #expect(folder.status == LedgerError.Code.invalidInput.exitStatus && folder.stderr.contains("not a plain file"), "\(folder.stderr)")
        rmdir(fixture.db + "-rebuild.lock")
        // Nor is a socket (open fails on it with ENXIO).
        let socket = try Child("/usr/bin/python3", ["-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
                                                    fixture.db + "-rebuild.lock"]).finish(within: 30)
        #expect(socket.status == 0, "\(socket.stderr)")
        let bound = try fixture.ledger(["rebuild"])
        #expect(bound.status == LedgerError.Code.invalidInput.exitStatus && bound.stderr.contains("not a plain file"), "\(bound.stderr)")
        unlink(fixture.db + "-rebuild.lock")
        #expect(try fixture.ledger(["rebuild"]).status == 0)
    }

    /// A lock file another user made (its owner is not the store's) holds the store's writer
    /// mutex and reader table: a held lock on it stalled every command. Refused by name, for a
    /// store and for a new one an import makes. (Run as root: only root can give a file away.)
    @Test(.enabled(if: geteuid() == 0)) func aLockFileOfAnotherUserIsRefused() throws {
        let export = fixture.path("e.jsonl")
        #expect(try fixture.ledger(["export", "--out", export]).status == 0)
        #expect(FileManager.default.fileExists(atPath: fixture.db + "-lock"))
        #expect(chown(fixture.db + "-lock", 65534, 65534) == 0)
        let out = try fixture.ledger(["log"])
        #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stderr.contains("belongs to another user"),
                "\(out.status) \(out.stderr)")
        let fresh = fixture.path("fresh.lmdb")
        #expect(FileManager.default.createFile(atPath: fresh + "-lock", contents: Data()))
        #expect(chown(fresh + "-lock", 65534, 65534) == 0)
        // Refused before the work, nothing made: an import or a demo there would make a store
        // that lock file then keeps every command from.
        for args in [["import", export], ["demo"]] {
            let out = try fixture.ledger(args, db: fresh)
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stderr.contains("belongs to another user"),
                    "\(args): \(out.status) \(out.stderr)")
            #expect(!FileManager.default.fileExists(atPath: fresh))
        }
    }

    /// Root reading or rebuilding another user's store makes its lock files that user's: a
    /// 0600 file of root's had kept the owner out, and the owner check then root too. A
    /// rebuild lock another user planted is refused, as a lock file is.
    @Test(.enabled(if: geteuid() == 0)) func rootLeavesTheOwnersLockFilesTheOwners() throws {
        let store = fixture.path("theirs.lmdb")
        #expect(try fixture.ledger(["init", "--test-clock"], db: store).status == 0)
        for p in [store, store + "-lock"] { #expect(chown(p, 65534, 65534) == 0) }
        unlink(store + "-lock")
        for args in [["verify"], ["verify"], ["rebuild"]] {
            let out = try fixture.ledger(args, db: store)
            #expect(out.status == 0, "\(args): \(out.stderr)")
        }
        for p in [store + "-lock", store + "-rebuild.lock"] {
            let owner = try #require(FileManager.default.attributesOfItem(atPath: p)[.ownerAccountID] as? NSNumber)
            #expect(owner.intValue == 65534, "\(p)")
        }
        let mine = fixture.db
        #expect(FileManager.default.createFile(atPath: mine + "-rebuild.lock", contents: Data()))
        #expect(chown(mine + "-rebuild.lock", 65534, 65534) == 0)
        let refused = try fixture.ledger(["rebuild"])
        #expect(refused.status == LedgerError.Code.invalidInput.exitStatus && refused.stderr.contains("belongs to another user"),
                "\(refused.status) \(refused.stderr)")
    }

    /// An import leaves the new store's lock file made, as init does, made before the store is
    /// moved in: a name left free would be anyone's to take.
    @Test func aNewStoreComesWithItsLockFile() throws {
        let export = fixture.path("e.jsonl")
        #expect(try fixture.ledger(["export", "--out", export]).status == 0)
        for (args, db) in [(["import", export], fixture.path("i.lmdb")), (["init", "--test-clock"], fixture.path("n.lmdb")),
                           (["demo"], fixture.path("d.lmdb"))] {
            #expect(try fixture.ledger(args, db: db).status == 0)
            #expect(FileManager.default.fileExists(atPath: db + "-lock"), "\(args)")
        }
    }

    /// A lock file of the user's own with no store beside it (an init killed between making
    /// it and moving its store in) is taken by the next init, which had refused it for good;
    /// one that a process holds, or that is a link, is still refused.
    @Test func initTakesALeftoverLockFileButNotOneInUse() throws {
        let db = fixture.path("left.lmdb")
        #expect(try fixture.ledger(["init", "--test-clock"], db: db).status == 0)
        #expect(unlink(db) == 0 && FileManager.default.fileExists(atPath: db + "-lock"))
        // Left open to others (a store shared with a group had it 0660): taken, it is owner-only again.
        #expect(chmod(db + "-lock", 0o666) == 0)
        #expect(try fixture.ledger(["init", "--test-clock"], db: db).status == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: db + "-lock")[.posixPermissions] as? Int == 0o600)
        #expect(try fixture.ledger(["verify"], db: db).status == 0)
        #expect(unlink(db) == 0)
        // Held as LMDB holds it while a store is open: a shared lock on its first byte.
        let holder = try Child("/usr/bin/python3", ["-c", """
            import fcntl, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDWR); fcntl.lockf(fd, fcntl.LOCK_SH, 1, 0); print("held", flush=True); time.sleep(60)
            """, db + "-lock"])
        defer { holder.kill() }
        let deadline = Date().addingTimeInterval(30)
        while !holder.stdoutSoFar.contains("held"), holder.isRunning, Date() < deadline { usleep(10_000) }
        #expect(holder.stdoutSoFar.contains("held"))
        let held = try fixture.ledger(["init", "--test-clock"], db: db)
        #expect(held.status == LedgerError.Code.notEmpty.exitStatus && held.stderr.contains("in use"), "\(held.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))
        let linked = fixture.path("linked.lmdb")
        #expect(symlink(fixture.path("nowhere"), linked + "-lock") == 0)
        #expect(try fixture.ledger(["init", "--test-clock"], db: linked).status == LedgerError.Code.notEmpty.exitStatus)
        #expect(!FileManager.default.fileExists(atPath: fixture.path("nowhere")))
    }

    /// Under a umask that takes the owner's write bit, the rebuild's lock file is still the
    /// owner's to open: the second rebuild had failed with "Permission denied".
    @Test func rebuildsUnderAStrictUmaskKeepWorking() throws {
        for round in 1...2 {
            let out = try Child("/bin/sh", ["-c", "umask 0277 && exec \"$0\" rebuild --db \"$1\"", LedgerProcess.binary, fixture.db])
                .finish(within: 120)
            #expect(out.status == 0, "round \(round): \(out.stderr)")
        }
        let mode = try #require(FileManager.default.attributesOfItem(atPath: fixture.db + "-rebuild.lock")[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }
}
