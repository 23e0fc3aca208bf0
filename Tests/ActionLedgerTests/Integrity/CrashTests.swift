import Foundation
import Testing
@testable import ActionLedger

/// Durability under crashes: a child appends and approves, printing each seq only after
/// its commit returned; we SIGKILL it at random moments and require every acknowledged
/// event to be there, whole, with the chain and projections intact.
/// `CRASH_ITERATIONS` (default 200) sets the number of kills; `CRASH_SEED` replays a run.
@Suite(.serialized) struct CrashTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["CRASH_ITERATIONS"] ?? "") ?? 200

    @Test func sigkillNeverLosesAnAcknowledgedEvent() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // A fresh store every 100 kills keeps each check's full walk short in long runs.
        var db = dir.appendingPathComponent("l-0.lmdb").path
        let seed = UInt64(ProcessInfo.processInfo.environment["CRASH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        var rng = SeededRandom(seed: seed)
        var acknowledged: [UInt64: Digest] = [:]
        var killedMidRun = 0, totalAcknowledged = 0
        for i in 0..<Self.iterations {
            if i > 0, i % 100 == 0 {
                db = dir.appendingPathComponent("l-\(i / 100).lmdb").path
                acknowledged = [:]
            }
            let child = try LedgerProcess.startStress(["torture", "--db", db])
            // Mostly short delays (inside startup, open and the first commits), sometimes longer.
            let delay = rng.int(10) == 0 ? 50_000 + rng.int(200_000) : rng.int(60_000)
            usleep(UInt32(delay))
            // The child appends until killed: one that exited by itself failed (or finished
            // early), and what it acknowledged proves nothing about crashes.
            let alive = child.isRunning
            child.kill()
            let ended = try child.finish(within: 30)
            guard alive, ended.signalled, ended.status == SIGKILL else {
                let how = ended.signalled ? "signal \(ended.status)" : "exit status \(ended.status)"
                Issue.record("iteration \(i) (seed \(seed)): the child was not killed but ended by itself (\(how)): \(ended.stderr)")
                continue
            }
            let text = ended.stdout
            // Only whole lines were acknowledged; a line cut by the kill is not.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            for line in lines {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let seq = UInt64(parts[0]), let hash = Digest(hex: String(parts[1])) else {
                    Issue.record("iteration \(i): unreadable acknowledgement \(line)")
                    continue
                }
                acknowledged[seq] = hash
                totalAcknowledged += 1
            }
            if !lines.isEmpty { killedMidRun += 1 }
            guard FileManager.default.fileExists(atPath: db) else { continue }
            try check(db, acknowledged, "iteration \(i) (seed \(seed))")
        }
        print("crash test: \(Self.iterations) kills (\(killedMidRun) after acknowledgements), "
            + "\(totalAcknowledged) acknowledged events checked, seed \(seed)")
        #expect(killedMidRun > Self.iterations / 4, "too few kills landed while events were being written")
        #expect(totalAcknowledged > Self.iterations, "the children acknowledged too few events")
    }

    /// Reopens the store and checks it against what was acknowledged.
    func check(_ db: String, _ acknowledged: [UInt64: Digest], _ label: String) throws {
        let ledger = try Ledger(path: db)
        defer { withExtendedLifetime(ledger) {} }
        let report: VerifyReport
        do {
            report = try ledger.verify(VerifyOptions(deep: true))
        } catch {
            Issue.record("\(label): verify failed: \(error)")
            return
        }
        for (seq, hash) in acknowledged {
            let stored = try ledger.read { try $0.event(seq) }
            #expect(stored?.hash == hash, "\(label): acknowledged seq \(seq) lost or changed")
        }
        #expect(report.head.seq >= acknowledged.keys.max() ?? 0, "\(label)")
        do { try ledger.verifyProjections() } catch { Issue.record("\(label): \(error)") }
    }
}
