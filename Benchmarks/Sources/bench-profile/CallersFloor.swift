import ActionLedger
import Baselines
import BenchSupport
import Foundation

/// `bench-profile callers-floor <approvals>`: the floor of any design for 16 callers, signed
/// (issue 13's "16 signed callers ≥ 0.8× unsigned") and unsigned (issue 12's "16
/// approvers ≥ 10× the single rate"), on this machine.
///
/// No engine code runs. 16 caller threads each verify one ECDSA P-256 signature per
/// approval (the key parsed from its SPKI, as a tap's check must), then hand a write to a
/// leader/follower group commit over raw LMDB (a log put and an index put per approval,
/// durable): the first caller to find no leader commits everything queued, in one
/// transaction, and wakes its followers. That is the least a signed approval costs: one
/// verify, one share of a durable commit. The same loop without the verify is the
/// unsigned floor, and the engine's own 16 unsigned callers run beside both, each in five
/// rounds one after another (fsync's cost moves from one second to the next here), with
/// groups capped at 16 and at 8 (two halves of the callers alternating: one verifies while
/// the other's group commits). One caller committing each approval alone, through the
/// engine and through raw LMDB, gives the single rates the 16-approver target divides by.
enum CallersFloor {
    /// A group commit over raw LMDB with a writer thread that gathers as the engine's
    /// does: once a write is queued it waits for up to `cap`, at most as long as the last
    /// commit took (the callers that commit woke submit again within that), then commits
    /// them all in one durable transaction and wakes their callers.
    final class GroupCommit: @unchecked Sendable {
        // Safe: `queue` and `stopped` are only touched under `condition`'s lock; a job's
        // semaphore orders its caller's wake-up after the commit that carried it.
        private let condition = NSCondition()
        private var queue: [DispatchSemaphore] = []
        private var stopped = false
        private let log: RawLMDBLog
        private let cap: Int

        init(_ log: RawLMDBLog, cap: Int) {
            self.log = log
            self.cap = cap
            Thread { [self] in write() }.start()
        }

        /// Returns once a durable commit carried this caller's write.
        func submit() {
            let done = DispatchSemaphore(value: 0)
            condition.lock()
            queue.append(done)
            if queue.count == 1 || queue.count >= cap { condition.signal() }
            condition.unlock()
            done.wait()
        }

        func stop() {
            condition.lock()
            stopped = true
            condition.signal()
            condition.unlock()
        }

        private func write() {
            var lastCommit = 0.0
            condition.lock()
            while true {
                while queue.isEmpty && !stopped { condition.wait() }
                if queue.isEmpty { break }
                let deadline = Date(timeIntervalSinceNow: lastCommit)
                while queue.count < cap && condition.wait(until: deadline) {}
                let group = Array(queue.prefix(cap))
                queue.removeFirst(group.count)
                condition.unlock()
                let t = Date()
                do { try log.append(count: group.count, value: Sample.storedValue) } catch { fatalError("\(error)") }
                lastCommit = -t.timeIntervalSinceNow
                for s in group { s.signal() }
                condition.lock()
            }
            condition.unlock()
        }
    }

    static func run(approvals: Int) throws {
        let callers = 16, signer = BenchSigner()
        let message = [UInt8](repeating: 0x5A, count: 220)  // a statement's length
        let signatures = try (0..<approvals).map { _ in try signer.signature(message) }
        let engine = try EngineSetup.ledger(at: Scratch.fresh("callers-floor-engine"))
        try EngineSetup.proposePending(engine, prefix: "f", count: approvals * 6)
        var used = 0
        let gang = Gang(callers)
        func cpuSeconds() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        /// Approvals per second and CPU per approval of `body` run by every caller.
        func timed(_ body: @escaping @Sendable (Int, Int) -> Void) -> (Double, Double) {
            let c = cpuSeconds(), t = Date()
            gang.run { i in for j in stride(from: i, to: approvals, by: callers) { body(i, j) } }
            let elapsed = -t.timeIntervalSinceNow
            return (Double(approvals) / elapsed, (cpuSeconds() - c) / Double(approvals) * 1e6)
        }
        func raw(signed: Bool, cap: Int) throws -> (Double, Double) {
            let commit = GroupCommit(try RawLMDBLog(path: Scratch.fresh("callers-floor-raw")), cap: cap)
            defer { commit.stop() }
            return timed { _, j in
                if signed { precondition(signer.verify(signatures[j], message)) }
                commit.submit()
            }
        }
        /// One caller, one approval per durable commit: the single rate the 16-approver
        /// target divides by (`approvals / 16` of them).
        func single(_ n: Int = approvals / 16, _ body: (Int) throws -> Void) rethrows -> (Double, Double) {
            let c = cpuSeconds(), t = Date()
            for j in 0..<n { try body(j) }
            return (Double(n) / -t.timeIntervalSinceNow, (cpuSeconds() - c) / Double(n) * 1e6)
        }
        let singleLog = try RawLMDBLog(path: Scratch.fresh("callers-floor-single"))
        let names = ["engine, unsigned", "raw, unsigned", "raw, signed", "raw, unsigned, groups ≤ 8", "raw, signed, groups ≤ 8",
                     "engine, one caller", "raw, one caller"]
        var rates = [[(Double, Double)]](repeating: [], count: names.count)
        for _ in 0..<5 {
            let base = used
            used += approvals
            rates[0].append(timed { _, j in EngineSetup.approve(engine, Sample.actionId("f", base + j)) })
            rates[1].append(try raw(signed: false, cap: 16))
            rates[2].append(try raw(signed: true, cap: 16))
            rates[3].append(try raw(signed: false, cap: 8))
            rates[4].append(try raw(signed: true, cap: 8))
            let singles = used
            used += approvals / 16
            rates[5].append(single { EngineSetup.approve(engine, Sample.actionId("f", singles + $0)) })
            rates[6].append(try single { _ in try singleLog.append(count: 1, value: Sample.storedValue) })
        }
        let medians = rates.map { $0.sorted { $0.0 < $1.0 }[$0.count / 2] }
        for (name, m) in zip(names, medians) {
            print(String(format: "%-28@ %7.0f /s  %5.0f µs CPU per approval  (%.2f× the engine's unsigned)",
                         name as NSString, m.0, m.1, m.0 / medians[0].0))
        }
        print(String(format: "16 callers over one: engine %.1f×, raw %.1f×", medians[0].0 / medians[5].0, medians[1].0 / medians[6].0))
        // make bench's shape: bursts of 256 from the 16 callers, each followed by 8 single
        // commits on one caller's thread (as a lone caller commits in the engine); the
        // ratio of the medians. The writer thread gathers from a burst's first write on.
        let commit = GroupCommit(try RawLMDBLog(path: Scratch.fresh("callers-floor-bursts")), cap: 16)
        defer { commit.stop() }
        var bursts: [Double] = [], singles: [Double] = []
        for _ in 0..<max(5, approvals / 256) {
            let t = Date()
            gang.run { _ in for _ in 0..<16 { commit.submit() } }
            bursts.append(256 / -t.timeIntervalSinceNow)
            singles.append(try single(8) { _ in try singleLog.append(count: 1, value: Sample.storedValue) }.0)
        }
        bursts.sort()
        singles.sort()
        print(String(format: "raw in make bench's shape: bursts %.0f/s, single %.0f/s, %.1f×", bursts[bursts.count / 2],
                     singles[singles.count / 2], bursts[bursts.count / 2] / singles[singles.count / 2]))
    }
}
