import Foundation
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// The server's sessions file (`NAME.sessions.lmdb`, beside the store) holds every kept
/// response and the sessions' hashes: a file planted at its name in a shared folder was
/// used as it was (another user then read and wrote it), a link there was written through,
/// and LMDB made a new one under the umask (0000 under umask 0777, which no start could open).
@Suite struct SessionFileTests {
    let fixture: ProcessFixture
    init() throws { fixture = try ProcessFixture("sessions") }

    var sessions: String { SessionStore.path(beside: fixture.db) }

    func open() throws -> SessionStore { try SessionStore(path: sessions, store: fixture.db, now: t0) }

    @Test func aLinkAFileOfAnotherKindOrAStoreIsRefusedAndNothingIsWrittenThrough() throws {
        let victim = fixture.path("victim")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(symlink(victim, sessions) == 0)
        let linked = expectLedgerError(.invalidInput) { _ = try open() }
        #expect(linked?.message.contains("plain file") == true)
        #expect(FileManager.default.contents(atPath: victim) == Data("keep".utf8))
        #expect(!FileManager.default.fileExists(atPath: victim + "-lock"))
        #expect(unlink(sessions) == 0)
        // Not LMDB's: no longer reported as damage to the store the server serves.
        try Data("hello".utf8).write(to: URL(fileURLWithPath: sessions))
        #expect(expectLedgerError(.invalidInput) { _ = try open() }?.message.contains("not an LMDB file") == true)
        #expect(unlink(sessions) == 0)
        // A store (a copy of the served one) at that name: its file is left unwritten.
        try FileManager.default.copyItem(atPath: fixture.db, toPath: sessions)
        let before = FileManager.default.contents(atPath: sessions)
        #expect(expectLedgerError(.invalidInput) { _ = try open() }?.message.contains("ActionLedger store") == true)
        #expect(FileManager.default.contents(atPath: sessions) == before)
    }

    @Test func aNewFileIsOwnerOnlyWhateverTheUmask() throws {
        let out = try Child("/bin/sh", ["-c", "umask 0777 && exec \"$0\" serve --db \"$1\" --listen 127.0.0.1:0",
                                        LedgerProcess.binary, fixture.db])
        defer { out.kill() }
        let deadline = Date().addingTimeInterval(30)
        while !out.stdoutSoFar.contains("listening on"), out.isRunning, Date() < deadline { usleep(10_000) }
        #expect(out.stdoutSoFar.contains("listening on"))
        out.kill(SIGTERM)
        _ = try? out.finish(within: 30)
        for file in [sessions, sessions + "-lock"] {
            let mode = try #require(FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "\(file): \(String(mode, radix: 8))")
        }
        _ = try open()  // and the next start opens it
    }

    /// Another user's file at the name is refused; root's file made for another user's
    /// store is that user's. (Run as root: only root can give a file away.)
    @Test(.enabled(if: geteuid() == 0)) func anotherUsersFileIsRefusedAndRootMakesTheOwners() throws {
        #expect(FileManager.default.createFile(atPath: sessions, contents: Data()))
        #expect(chown(sessions, 65534, 65534) == 0)
        #expect(expectLedgerError(.invalidInput) { _ = try open() }?.message.contains("belongs to another user") == true)
        #expect(unlink(sessions) == 0)
        #expect(chown(fixture.db, 65534, 65534) == 0)
        _ = try open()
        for file in [sessions, sessions + "-lock"] {
            let owner = try #require(FileManager.default.attributesOfItem(atPath: file)[.ownerAccountID] as? NSNumber)
            #expect(owner.intValue == 65534, "\(file)")
        }
    }

    /// The file LMDB opened is checked too, not only the name before it: another user's file
    /// put there between the check and the open (a race a looping attacker won) is refused,
    /// as is a name that no longer leads to the file opened.
    @Test(.enabled(if: geteuid() == 0)) func theFileOpenedIsCheckedNotOnlyTheName() throws {
        let environment = try Environment(path: sessions)
        try SessionStore.requireOpenedOwn(environment, sessions, store: fixture.db)
        #expect(chown(sessions, 65534, 65534) == 0)
        #expect(expectLedgerError(.invalidInput) { try SessionStore.requireOpenedOwn(environment, sessions, store: fixture.db) }?
            .message.contains("belongs to another user") == true)
        let other = fixture.path("other")
        #expect(FileManager.default.createFile(atPath: other, contents: Data()) && rename(other, sessions) == 0)
        #expect(expectLedgerError(.invalidInput) { try SessionStore.requireOpenedOwn(environment, sessions, store: fixture.db) }?
            .message.contains("was replaced") == true)
    }
}
