import Foundation
import Testing
@testable import ActionLedger

/// A rebuild in another process, against appends and SIGKILL.
@Suite(.serialized) struct RebuildProcessTests {
    @Test func rebuildWhileAnotherProcessAppends() throws {
        let t = try TempLedger()
        let l = t.ledger!
        // Enough events that the rebuild's 200 chunks (each a durable commit) are still
        // running while the appends get going; the binary has no pause to slow it.
        try fill(l, count: 20_000)
        let startHead = try l.read { try $0.head().seq }
        let child = try LedgerProcess.start(["rebuild", "--db", t.path, "--json", "--batch-size", "100"])
        defer { child.kill() }
        // Appends paced well below the rebuild's pace (100 events a chunk), so it catches up
        // with a head that keeps moving instead of chasing it: appended as fast as
        // possible, the rebuild only reached the head by luck (285 s in CI).
        var appended = 0
        let deadline = Date().addingTimeInterval(120)
        repeat {
            try fill(l, count: 20, from: 30_000 + appended, person: "mia")
            appended += 20
            usleep(20_000)
        } while child.isRunning && Date() < deadline
        if child.isRunning {
            child.kill()
            throw Hung(description: "`\(child.label)` had not caught up with the appends after 120 s (\(appended) appended): killed")
        }
        let ended = try child.finish(within: 10)
        #expect(ended.status == 0 && !ended.signalled, "rebuild: \(ended.status) \(ended.stderr)")
        #expect(appended >= 40, "the rebuild finished before the appends got going")
        let report = try JSONParser.parse(ended.stdout)
        guard case .array(let results)? = report["projections"] else { Issue.record("no results: \(report)"); return }
        #expect(results.count == 5)
        for r in results {
            #expect(r["swapped"] == true)
            // The swap happened at a head the appends had moved past the start.
            if case .number(let checkpoint)? = r["checkpoint"] { #expect(UInt64(checkpoint) > startHead) }
        }
        let head = try l.read { try $0.head().seq }
        #expect(try liveMetas(l).values.allSatisfy { $0.checkpoint <= head && head - $0.checkpoint < l.registry.maxLag })
        #expect(try l.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
        let pending = try l.read { r in
            try (0..<appended).filter { try r.actionState("p\(30_000 + $0)")?.status == .pending }.count
        }
        #expect(try l.query { try $0.today(TodayQuery(person: "mia", now: t0.adding(milliseconds: Timestamp.day))) }.count == pending)
    }

    /// `--batch-size` is documented, and a size that could never finish is refused before
    /// anything is written.
    @Test func batchSizeIsDocumentedAndZeroIsRefused() throws {
        let t = try TempLedger()
        try fill(t.ledger!, count: 10)
        let help = try LedgerProcess.run(["rebuild", "--help"])
        #expect(help.stdout.contains("--batch-size <n>"))
        let zero = try LedgerProcess.run(["rebuild", "--db", t.path, "--batch-size", "0", "--json"])
        #expect(zero.status == LedgerError.Code.invalidInput.exitStatus)
        #expect(zero.stdout.contains("invalid_input"))
        #expect(try t.ledger!.environment.read { txn in
            try t.ledger!.registry.projections.compactMap { try t.ledger!.registry.meta($0.name, rebuild: true, in: txn) }
        }.isEmpty)
        // A budget whose bytes do not fit a word is named too large, not "not positive".
        for mib in ["8796093022208", "9223372036854775807"] {
            let huge = try LedgerProcess.run(["rebuild", "--db", t.path, "--memory-mib", mib])
            #expect(huge.status == LedgerError.Code.invalidInput.exitStatus && huge.stderr.contains("too large"), "\(huge.stderr)")
        }
        let small = try LedgerProcess.run(["rebuild", "--db", t.path, "--batch-size", "3", "--json"])
        #expect(small.status == 0)
        #expect(try t.ledger!.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
    }

    @Test func killedRebuildResumesFromItsCheckpoint() throws {
        let t = try TempLedger()
        let l = t.ledger!
        // 300 chunks of 50, each a durable commit: far more than the polling below needs to
        // see the shadow pass 400 and kill it (the binary has no pause to slow it).
        try fill(l, count: 15_000)
        let head = try l.read { try $0.head().seq }
        let before = try liveMetas(l)
        // The entries' digests of the live state: what a resumed rebuild must arrive at.
        let entries = try l.environment.read { txn in
            try Dictionary(uniqueKeysWithValues: l.registry.projections.map { p in
                (p.name, try l.registry.store(for: p, meta: before[p.name]!, in: txn)!.entriesDigest())
            })
        }
        let child = try LedgerProcess.start(["rebuild", "--db", t.path, "--batch-size", "50"])
        defer { child.kill() }
        func shadows() throws -> [String: ProjectionMeta] {
            try l.environment.read { txn in
                var out: [String: ProjectionMeta] = [:]
                for p in l.registry.projections { out[p.name] = try l.registry.meta(p.name, rebuild: true, in: txn) }
                return out
            }
        }
        try waitUntil("the rebuild's activity shadow to pass seq 400", seconds: 60, pollMicroseconds: 5000) {
            try !child.isRunning || (shadows()["activity"]?.checkpoint ?? 0) >= 400
        }
        #expect(child.isRunning, "the rebuild ended before it was killed")
        child.kill()
        let ended = try child.finish(within: 30)
        #expect(ended.signalled && ended.status == SIGKILL, "rebuild: \(ended.status) \(ended.stderr)")
        let interrupted = try shadows()
        #expect(interrupted.count == 5)
        for (name, shadow) in interrupted {
            #expect(shadow.checkpoint >= 400 && shadow.checkpoint < head, "\(name) shadow at \(shadow.checkpoint)")
            #expect(shadow.generation != before[name]!.generation)
        }
        // The live projections were never touched by the interrupted rebuild.
        #expect(try liveMetas(l) == before)
        // Run again: it continues from the shadow checkpoints (the flock died with the process).
        let results = try l.rebuild()
        for r in results {
            #expect(r.resumedFrom == interrupted[r.projection]!.checkpoint)
            #expect(r.swapped && r.digest == entries[r.projection]! && r.checkpoint == head)
        }
        #expect(try shadows().isEmpty)
    }
}
