import ActionLedger
import Benchmark
import BenchSupport
import Foundation

/// 16 callers approving actions picked at random among 100 000 pending ones, so each
/// approval touches another part of the per-action index, the command records and the
/// projections' trees; reported beside "approvals 16 callers", whose actions are few
/// (~14 000) and approved in order. Each iteration: ``approvalBurst`` approvals from 16 threads ("engine
/// ns") paired with 8 random single approvals one after another ("single ns" per approval).
func randomApprovals() {
    struct State {
        let engine: Ledger
        let gang: Gang
        let order: [Int]
        var next = 0
    }
    let callers = 16, pendingActions = 100_000, perIteration = approvalBurst, singles = 8, iterations = 50
    let state = Box<State>()
    let config = Benchmark.Configuration(metrics: [.wallClock, .throughput, metric("engine"), metric("single")],
                                         warmupIterations: 2, maxDuration: .seconds(60), maxIterations: iterations)
    Benchmark("approvals 16 callers random 100k", configuration: config) { benchmark in
        var s = state.get
        let base = s.next
        s.next += perIteration + singles
        state.value = s
        let l = s.engine, order = s.order, each = perIteration / callers
        let approve: @Sendable (Int) -> Void = { k in
            EngineSetup.approve(l, Sample.actionId("r", order[k]))
        }
        try rotated(base / (perIteration + singles), [
            { benchmark.measurement(metric("engine"), nanoseconds {
                s.gang.run { i in for j in 0..<each { approve(base + i * each + j) } }
            }) },
            { benchmark.measurement(metric("single"), nanoseconds {
                for k in 0..<singles { approve(base + perIteration + k) }
            } / singles) },
        ])
    } setup: {
        let l = try EngineSetup.ledger(at: Scratch.fresh("approve-random-100k"))
        try EngineSetup.proposePending(l, prefix: "r", count: pendingActions)
        let used = (perIteration + singles) * (iterations + 3)
        state.value = State(engine: l, gang: Gang(callers), order: Array((0..<pendingActions).shuffled().prefix(used)))
    } teardown: {
        state.value?.gang.stop()
        state.value = nil
    }
}
