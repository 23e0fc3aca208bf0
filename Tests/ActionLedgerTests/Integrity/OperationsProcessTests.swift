import Foundation
import Testing
@testable import ActionLedger

/// Backup under a running writer and map growth under readers, with real processes.
@Suite(.serialized) struct OperationsProcessTests {
    typealias F = IntegrityFixtures

    @Test func backupWhileAWriterRunsIsAConsistentVerifiablePrefix() throws {
        let f = try ProcessFixture("backup")
        let writer = try LedgerProcess.startStress(["torture", "--db", f.db])
        defer { writer.kill() }
        // Wait for the writer's first acknowledgement, then copy several times while it runs.
        try waitUntil("the first acknowledgement of `\(writer.label)`") { !writer.stdoutSoFar.isEmpty || !writer.isRunning }
        #expect(writer.isRunning, "the writer stopped before the backups began")
        var sizes: [UInt64] = []
        for i in 0..<4 {
            usleep(100_000)
            let dest = f.path("backup-\(i).lmdb")
            let r = try f.ledger(["backup", dest, "--json"])
            #expect(r.status == 0, "\(r.stderr)")
            let verified = try LedgerProcess.run(["verify", "--json"], environment: ["LEDGER_DB": dest])
            #expect(verified.status == 0, "\(verified.stderr)")
            guard case .number(let n)? = try JSONParser.parse(verified.stdout)["events"] else { continue }
            sizes.append(UInt64(n))
            #expect(!FileManager.default.fileExists(atPath: dest + ".partial"))
        }
        #expect(sizes.count == 4 && sizes.first! > 0)
        #expect(sizes == sizes.sorted())
        // Still running when killed: it never stopped or failed while the backups were taken.
        #expect(writer.isRunning, "the writer stopped by itself during the backups")
        writer.kill()
        let ended = try writer.finish(within: 30)
        #expect(ended.signalled && ended.status == SIGKILL, "writer: \(ended.status) \(ended.stderr)")
        // Every backup is a prefix of the source log: the same hash at each of its seqs.
        let source = try Ledger(path: f.db, options: Ledger.Options(readOnly: true))
        for i in 0..<sizes.count {
            let copy = try Ledger(path: f.path("backup-\(i).lmdb"), options: Ledger.Options(readOnly: true))
            let head = try copy.read { try $0.head() }
            #expect(try source.read { try $0.event(head.seq)?.hash } == head.hash)
        }
        #expect(try f.ledger(["backup", f.path("backup-0.lmdb")]).status == LedgerError.Code.invalidInput.exitStatus)
    }

    @Test func appendsContinueAcrossMapGrowthWhileOtherProcessesRead() throws {
        let f = try ProcessFixture("grow")
        let tiny = 256 << 10
        var options = Ledger.Options()
        options.environment.mapSize = tiny
        try f.withLedger(options) { try $0.link("seed-phone") }
        let perWriter = 120
        let finalHead = UInt64(1 + 1 + 2 + 2 * perWriter)  // store.created, the seed link, each writer's link, its events
        var children = try (0..<2).map { _ in try LedgerProcess.startStress(["read", "--db", f.db, "--until", "\(finalHead)"]) }
        children += try ["a", "b"].map {
            try LedgerProcess.startStress(["grow", "--db", f.db, "--map-size", "\(tiny)", "--count", "\(perWriter)", "--writer", $0])
        }
        let results = try ProcessFixture.collect(children)
        #expect(results.allSatisfy { $0.status == 0 && !$0.signalled }, "\(results)")
        for r in results.prefix(2) { #expect((Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 1) }
        for r in results.suffix(2) { #expect((Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 4 * tiny) }
        let l = try Ledger(path: f.db, options: Ledger.Options(readOnly: true))
        #expect(try l.verify(VerifyOptions(deep: true)).head.seq == finalHead)
        #expect(l.environment.mapSize >= 4 * tiny)
        for w in ["a", "b"] { #expect(try l.read { try $0.actionState("g-\(w)-\(perWriter - 1)") } != nil) }
    }
}
