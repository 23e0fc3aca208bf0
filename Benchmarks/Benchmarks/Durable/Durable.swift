import ActionLedger
import Baselines
import Benchmark
import BenchSupport
import Foundation

// Durable paths: every measured commit is fsync'd (no unsafeNoSync anywhere in this file).
// Names are read by bench-report: keep "<workload> <system> <parameter>".

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], warmupIterations: 3,
                                           maxDuration: .seconds(4), maxIterations: 1_000)
    for n in [1, 10, 100, 1000] { ingest(n) }
    singleCommits()
    for callers in [1, 4, 16, 64] { concurrentApprovals(callers) }
    concurrentRawCommits(16)
}

/// Proposals at `n` per transaction: the engine (chain, indexes, inline projections,
/// idempotency record) against the two baselines writing the same ~282-byte values.
func ingest(_ n: Int) {
    let iterations = n >= 100 ? 200 : 1_000
    let config = Benchmark.Configuration(maxIterations: iterations)
    let engine = Box<(Ledger, Int)>()
    Benchmark("ingest engine \(n)/txn", configuration: config) { benchmark in
        var (l, next) = engine.get
        let requests = (next..<next + n).map {
            CommandRequest(.propose(Sample.proposal(Sample.actionId("in", $0), person: Sample.person(0))), now: Sample.base)
        }
        next += n
        engine.value = (l, next)
        benchmark.startMeasurement()
        try EngineSetup.mustSucceed(l, requests)
        benchmark.stopMeasurement()
    } setup: {
        engine.value = (try EngineSetup.ledger(at: Scratch.fresh("ingest-engine-\(n)")), 0)
    } teardown: {
        engine.value = nil
    }

    let lmdb = Box<RawLMDBLog>()
    Benchmark("ingest lmdb \(n)/txn", configuration: config) { _ in
        try lmdb.get.append(count: n, value: Sample.storedValue)
    } setup: {
        lmdb.value = try RawLMDBLog(path: Scratch.fresh("ingest-lmdb-\(n)"))
    } teardown: {
        lmdb.value = nil
    }

    let sqlite = Box<SQLiteLog>()
    Benchmark("ingest sqlite \(n)/txn", configuration: config) { _ in
        try sqlite.get.append(count: n, value: Sample.storedValue)
    } setup: {
        sqlite.value = try SQLiteLog(path: Scratch.fresh("ingest-sqlite-\(n)"))
    } teardown: {
        sqlite.value = nil
    }
}

/// One durable approval (a low-stakes action's single tap) against one raw LMDB commit
/// of a log put and an index put, and one SQLite insert commit.
func singleCommits() {
    let pending = 2_000
    let config = Benchmark.Configuration(maxIterations: pending - 10)
    let engine = Box<(Ledger, Int)>()
    Benchmark("approve engine single", configuration: config) { _ in
        let (l, next) = engine.get
        engine.value = (l, next + 1)
        let r = try l.execute(CommandRequest(.tap(.approve, actionId: Sample.actionId("p", next), device: Sample.device(0)),
                                             now: Sample.base))
        precondition(r.events.count == 1, "approval appended nothing")
    } setup: {
        let l = try EngineSetup.ledger(at: Scratch.fresh("approve-single"))
        try EngineSetup.proposePending(l, prefix: "p", count: pending)
        engine.value = (l, 0)
    } teardown: {
        engine.value = nil
    }

    let lmdb = Box<RawLMDBLog>()
    Benchmark("commit lmdb single", configuration: config) { _ in
        try lmdb.get.append(count: 1, value: Sample.storedValue)
    } setup: {
        lmdb.value = try RawLMDBLog(path: Scratch.fresh("commit-lmdb"))
    } teardown: {
        lmdb.value = nil
    }

    let sqlite = Box<SQLiteLog>()
    Benchmark("commit sqlite single", configuration: config) { _ in
        try sqlite.get.append(count: 1, value: Sample.storedValue)
    } setup: {
        sqlite.value = try SQLiteLog(path: Scratch.fresh("commit-sqlite"))
    } teardown: {
        sqlite.value = nil
    }
}

/// 64 approvals per iteration, made by `callers` threads (64/callers each, one after
/// another) through ``Ledger/execute(_:)``: the writer groups whatever is queued.
func concurrentApprovals(_ callers: Int) {
    let perIteration = 64, iterations = 60
    let config = Benchmark.Configuration(warmupIterations: 2, maxIterations: iterations)
    let state = Box<(Ledger, Gang, Int)>()
    Benchmark("approve engine callers \(callers)", configuration: config) { _ in
        let (l, gang, base) = state.get
        state.value = (l, gang, base + perIteration)
        let each = perIteration / callers
        gang.run { i in
            for j in 0..<each {
                let id = Sample.actionId("c", base + i * each + j)
                do {
                    let r = try l.execute(CommandRequest(.tap(.approve, actionId: id, device: Sample.device(0)), now: Sample.base))
                    precondition(r.events.count == 1, "approval of \(id) appended nothing")
                } catch {
                    fatalError("approval of \(id) failed: \(error)")
                }
            }
        }
    } setup: {
        let l = try EngineSetup.ledger(at: Scratch.fresh("approve-callers-\(callers)"))
        try EngineSetup.proposePending(l, prefix: "c", count: perIteration * (iterations + 2))
        state.value = (l, Gang(callers), 0)
    } teardown: {
        state.value?.1.stop()
        state.value = nil
    }
}

/// The same 64 commits from `callers` threads on raw LMDB, one transaction each: LMDB
/// serialises them, nothing groups them.
func concurrentRawCommits(_ callers: Int) {
    let config = Benchmark.Configuration(warmupIterations: 2, maxIterations: 60)
    let state = Box<(RawLMDBLog, Gang)>()
    Benchmark("commit lmdb callers \(callers)", configuration: config) { _ in
        let (log, gang) = state.get
        gang.run { _ in
            for _ in 0..<(64 / callers) {
                do { try log.append(count: 1, value: Sample.storedValue) } catch { fatalError("\(error)") }
            }
        }
    } setup: {
        state.value = (try RawLMDBLog(path: Scratch.fresh("commit-lmdb-callers-\(callers)")), Gang(callers))
    } teardown: {
        state.value?.1.stop()
        state.value = nil
    }
}
