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
}
