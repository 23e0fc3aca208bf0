import Foundation
import Testing
@testable import ActionLedger

/// A write that cannot grow the file (a full disk, a file-size limit) is refused whole, says
/// why in terms an operator can act on, and the store takes writes again once it can grow.
@Suite struct FullDiskTests {
    @Test func aWritePastTheFileSizeLimitIsRefusedWholeAndSaysWhy() throws {
        let f = try ProcessFixture("full")
        let lines = (0..<400).map { i in
            var doc = HostileInputTests.proposalDoc
            doc = JSONMutator.set(doc, ["action_id"], .string("fill-\(i)"))
            doc = JSONMutator.set(doc, ["command_id"], .string("c-fill-\(i)"))
            return JSONMutator.set(doc, ["preview", "text"], .string(String(repeating: "x", count: 2_000))).serialized()
        }
        let batch = f.path("batch.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: batch))
        let size = try FileManager.default.attributesOfItem(atPath: f.db)[.size] as! Int
        // dash's `ulimit -f` counts 512-byte blocks; SIGXFSZ ignored, so the write fails with an error.
        let limited = try Child("/bin/sh", ["-c", "ulimit -f \(size / 512 + 64); trap '' XFSZ; exec \"$0\" \"$@\"",
                                            LedgerProcess.binary, "propose", "--batch", batch, "--json", "--db", f.db],
                                environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"]).finish(within: 60)
        #expect(limited.status == LedgerError.Code.storage.exitStatus, "\(limited.stdout) \(limited.stderr)")
        #expect(limited.stderr.contains("File too large") || limited.stderr.contains("the disk may be full"), "\(limited.stderr)")
        // All or nothing: none of the batch is in the log, and the store verifies.
        #expect(try f.ledger(["show", "fill-0"]).status == LedgerError.Code.unknownAction.exitStatus)
        #expect(try f.ledger(["verify", "--deep"]).status == 0)
        // With room again, the same batch goes in.
        #expect(try f.ledger(["propose", "--batch", batch]).status == 0)
        #expect(try f.ledger(["verify", "--deep"]).status == 0)
    }
}

/// Scratch stores a killed `import` or `demo` left behind are removed by the next run on the
/// path; a live process's are not.
@Suite struct AbandonedScratchTests {
    @Test func theNextImportRemovesADeadRunsScratchAndKeepsALiveOnes() throws {
        let f = try ProcessFixture("scratch")
        #expect(try f.ledger(["devices", "link", "phone", "--person", "quinn", "--label", "P", "--platform", "ios", "--org", "quinn-co"]).status == 0)
        let export = f.path("log.jsonl")
        #expect(try f.ledger(["export", "--out", export]).status == 0)
        // A process that has exited: its pid names no process now (checked, not assumed).
        let deadPid = try Child("/bin/sh", ["-c", "echo $$"]).finish(within: 10).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(kill(pid_t(deadPid)!, 0) == -1)
        let target = f.path("restored.lmdb")
        let dead = target + ".importing-\(deadPid)", live = target + ".importing-\(getpid())"
        // No such process here, but its LMDB lock is held (as a run in another PID namespace
        // sharing the directory would hold it): this test process takes it as liblmdb does.
        let held = target + ".importing-\(Int32.max - 1)"
        // The dead run's store is an LMDB file (a copy of one); a run killed before LMDB
        // wrote its first page leaves an empty one.
        try FileManager.default.copyItem(atPath: f.db, toPath: dead)
        let deadEmpty = target + ".importing-\(Int32.max - 2)"
        // As runs name them now: the PID, then a random suffix.
        let deadSuffixed = target + ".importing-\(deadPid)-c0ffee"
        for p in [dead + "-lock", deadEmpty, deadSuffixed, live, held, held + "-lock"] {
            #expect(FileManager.default.createFile(atPath: p, contents: p == deadEmpty || p == deadSuffixed ? Data() : Data("x".utf8)))
        }
        // Left alone while recently changed (a run in another PID namespace has its scratch
        // closed for a moment): the others last changed an hour ago.
        let recent = target + ".importing-\(deadPid)-beef"
        #expect(FileManager.default.createFile(atPath: recent, contents: Data()))
        for p in [dead, dead + "-lock", deadEmpty, deadSuffixed, live, held, held + "-lock"] {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: p)
        }
        // Files of the user's that merely bear the name (a pid that is gone): a folder with
        // work in it, a text file, a link. Kept: only what a run makes is removed.
        let folder = target + ".importing-\(Int32.max - 3)", notes = target + ".importing-\(Int32.max - 4)"
        let link = target + ".importing-\(Int32.max - 5)"
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: folder + "/sub/thesis.txt", contents: Data("keep me".utf8)))
        #expect(FileManager.default.createFile(atPath: notes, contents: Data("my notes".utf8)))
        #expect(symlink(f.db, link) == 0)
        let fd = open(held + "-lock", O_RDWR)
        defer { close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_len = 1
        #expect(fcntl(fd, F_SETLK, &lock) == 0)
        #expect(try f.ledger(["import", export], db: target).status == 0)
        #expect(!FileManager.default.fileExists(atPath: dead) && !FileManager.default.fileExists(atPath: dead + "-lock"))
        #expect(!FileManager.default.fileExists(atPath: deadEmpty) && !FileManager.default.fileExists(atPath: deadSuffixed))
        #expect(FileManager.default.fileExists(atPath: recent))
        #expect(FileManager.default.fileExists(atPath: folder + "/sub/thesis.txt") && FileManager.default.fileExists(atPath: notes))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == f.db)
        // A live process's, and one whose lock is held, are left alone.
        #expect(FileManager.default.fileExists(atPath: live) && FileManager.default.fileExists(atPath: held))
        #expect(try f.ledger(["verify", "--deep"], db: target).status == 0)
    }
}
