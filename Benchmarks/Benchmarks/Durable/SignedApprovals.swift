import ActionLedger
import Baselines
import Benchmark
import BenchSupport
import Foundation

// Signed taps (issue 13): what a device proof adds to a durable approval. The engine
// verifies the P-256 signature before the write lock; the baseline is one raw LMDB commit
// plus one verification made separately, paired in the same iterations.

/// One signed durable approval against one raw LMDB commit and one ECDSA P-256 verify
/// (metrics "engine", "lmdb", "verify"); the target is engine ≤ 1.3× (lmdb + verify) at p50.
func signedSingleCommits() {
    struct State {
        let engine: Ledger
        let lmdb: RawLMDBLog
        let signer: BenchSigner
        var next = 0
    }
    let pending = 1_500
    let state = Box<State>()
    let config = Benchmark.Configuration(metrics: [.wallClock, .throughput, metric("engine"), metric("lmdb"), metric("verify")],
                                         maxIterations: pending - 10)
    Benchmark("signed single commit", configuration: config) { benchmark in
        var s = state.get
        let request = try s.signer.approval(s.engine, Sample.actionId("s", s.next))
        let message = Array("actionledger bench \(s.next)".utf8), signature = try s.signer.signature(message)
        s.next += 1
        state.value = s
        try rotated(s.next, [
            { benchmark.measurement(metric("engine"), try nanoseconds {
                let appended = try s.engine.execute(request).events.count
                precondition(appended == 1, "signed approval appended nothing")
            }) },
            { benchmark.measurement(metric("lmdb"), try nanoseconds { try s.lmdb.append(count: 1, value: Sample.storedValue) }) },
            { benchmark.measurement(metric("verify"), nanoseconds { precondition(s.signer.verify(signature, message)) }) },
        ])
    } setup: {
        let l = try EngineSetup.ledger(at: Scratch.fresh("signed-single"))
        let signer = BenchSigner()
        try signer.link(l)
        try EngineSetup.proposePending(l, prefix: "s", count: pending)
        state.value = State(engine: l, lmdb: try RawLMDBLog(path: Scratch.fresh("signed-commit-lmdb")), signer: signer)
    } teardown: {
        state.value = nil
    }
}

/// Each iteration: ``approvalBurst`` signed approvals from `callers` threads, paired with as many unsigned ones
/// from the same threads (metrics "engine", "unsigned"): proofs are verified outside the
/// write lock, so signing should cost the concurrent rate little.
func signedConcurrentApprovals(_ callers: Int) {
    struct State {
        let engine: Ledger
        let signer: BenchSigner
        let gang: Gang
        var next = 0
    }
    let perIteration = approvalBurst, iterations = 40
    let state = Box<State>()
    let config = Benchmark.Configuration(metrics: [.wallClock, .throughput, metric("engine"), metric("unsigned"),
                                                   metric("engine cpu"), metric("unsigned cpu")],
                                         warmupIterations: 2, maxIterations: iterations)
    Benchmark("signed approvals \(callers) callers", configuration: config) { benchmark in
        var s = state.get
        let base = s.next
        s.next += 2 * perIteration
        state.value = s
        let l = s.engine, gang = s.gang, each = perIteration / callers
        let signed = try (0..<perIteration).map { try s.signer.approval(l, Sample.actionId("g", base + $0)) }
        let unsigned = (0..<perIteration).map {
            CommandRequest(.tap(.approve, actionId: Sample.actionId("g", base + perIteration + $0), device: Sample.device(0)),
                           now: Sample.base)
        }
        @Sendable func run(_ requests: [CommandRequest]) {
            gang.run { i in
                for j in 0..<each {
                    do {
                        let appended = try l.execute(requests[i * each + j]).events.count
                        precondition(appended == 1, "an approval appended nothing")
                    } catch {
                        fatalError("approval failed: \(error)")
                    }
                }
            }
        }
        // The process's CPU time per iteration too: on a machine with few cores the two rates
        // are bounded by it (cores ÷ CPU per approval), whatever the lock does.
        func measured(_ name: String, _ requests: [CommandRequest]) {
            let cpu = processCPUNanoseconds()
            benchmark.measurement(metric(name), nanoseconds { run(requests) })
            benchmark.measurement(metric(name + " cpu"), processCPUNanoseconds() - cpu)
        }
        try rotated(base / (2 * perIteration), [
            { measured("engine", signed) },
            { measured("unsigned", unsigned) },
        ])
    } setup: {
        let l = try EngineSetup.ledger(at: Scratch.fresh("signed-callers-\(callers)"))
        let signer = BenchSigner()
        try signer.link(l)
        try EngineSetup.proposePending(l, prefix: "g", count: 2 * perIteration * (iterations + 3))
        state.value = State(engine: l, signer: signer, gang: Gang(callers))
    } teardown: {
        state.value?.gang.stop()
        state.value = nil
    }
}

/// User + system CPU time of this process so far, every thread included.
func processCPUNanoseconds() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}
