import ActionLedger
import Benchmark
import BenchSupport
import Foundation

// Whole-log passes over the 1M fixture: one iteration = one pass, timed as the custom
// metric "pass ns". Each records the heap it held (HeapProbe: malloc'd bytes in use, not
// the map's pages) over the first half of the log and over all of it — flat in the
// number of events means the two are equal: the second half adds 500k events and no
// memory. (The first tenth was the reference until a rebuild's chunk grew to a third of
// this log: its memory budget fills at the first chunk's end, which the first half holds.)
//
// ordo-one records no throughput sample for an iteration longer than 1 s, and its JMH
// export drops a benchmark without one; so the first measured iteration of each is an
// empty one (it only contributes that sample), and bench-report reads "pass ns".

func kb(_ name: String) -> BenchmarkMetric { .custom("\(name) KB", polarity: .prefersSmaller, useScalingFactor: false) }

func streamingConfig(scan: Bool) -> Benchmark.Configuration {
    Benchmark.Configuration(metrics: [.wallClock, .throughput, .custom("pass ns"), kb("heap first half"), kb("heap all")]
                                + (scan ? [.custom("scan ns"), .custom("cpu ns")] : []),
                            warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 4)
}

/// A raw cursor scan of the `events` database (every stored value's first and last byte
/// read), through the engine's thinnest reader: the floor a whole-log pass cannot beat on
/// this machine at this moment. Rebuilds record it in the same iterations ("scan ns") so a
/// slow spell of the shared VM shows in the ratio, not as a slower engine.
func rawScan(_ l: Ledger) throws -> Int {
    try l.read { r in
        var events = 0, sum = 0
        try r.forEachRaw { _, v in
            events += 1
            sum &+= Int(v[0]) &+ Int(v[v.count - 1])
            return true
        }
        blackHole(sum)
        return events
    }
}

/// Runs `pass` timed, except on the first call (see above).
func timedPass(_ benchmark: Benchmark, _ first: Box<Bool>, _ pass: () throws -> Void) rethrows {
    guard first.value == false else {
        first.value = false
        return
    }
    let start = DispatchTime.now().uptimeNanoseconds
    try pass()
    benchmark.measurement(.custom("pass ns"), Int(DispatchTime.now().uptimeNanoseconds - start))
}

func record(_ benchmark: Benchmark, _ probe: HeapProbe) {
    benchmark.measurement(kb("heap first half"), probe.peakEarly / 1024)
    benchmark.measurement(kb("heap all"), probe.peak / 1024)
}

/// One whole-log pass benchmark on the 1M fixture: the ledger is opened in set-up
/// (read-only for passes that only read, after a writable open has caught it up), and
/// `pass` runs timed with a heap probe it samples and that is then recorded. With
/// `scan`, each iteration also times a raw scan of the log, before or after the pass in
/// turn (so neither always finds the page cache warmed by the other).
func streamingBenchmark(_ name: String, readOnly: Bool, scan: Bool = false, pass: @escaping (Ledger) throws -> HeapProbe) {
    let state = Box<Ledger>()
    let first = Box<Bool>()
    let turn = Box<Int>()
    Benchmark(name, configuration: streamingConfig(scan: scan)) { benchmark in
        let l = state.get
        let scanFirst = turn.get % 2 == 0
        turn.value = turn.get + 1
        func scanned() throws {
            guard scan, !first.get else { return }
            var events = 0
            benchmark.measurement(.custom("scan ns"), try nanoseconds { events = try rawScan(l) })
            precondition(events >= MillionFixture.targetEvents, "scanned \(events) events")
        }
        if scanFirst { try scanned() }
        let wasFirst = first.get
        let cpu = cpuNanoseconds()
        try timedPass(benchmark, first) { record(benchmark, try pass(l)) }
        // CPU time of the whole process over the pass: on a VM shared with other builds, how
        // much of the wall time was the pass's own work rather than waiting for a core or the disk.
        if scan && !wasFirst { benchmark.measurement(.custom("cpu ns"), cpuNanoseconds() - cpu) }
        if !scanFirst && !wasFirst { try scanned() }
    } setup: {
        turn.value = 0
        first.value = true
        let path = try MillionFixture.path()
        if readOnly {
            // Catch up with a writable open first and close it: one environment may be
            // open only once per process.
            do { _ = try EngineSetup.ledger(at: path) }
            state.value = try Ledger(path: path, options: Ledger.Options(readOnly: true))
        } else {
            state.value = try EngineSetup.ledger(at: path)
        }
    } teardown: {
        state.value = nil
    }
}

/// Rebuild from seq 1 into shadow databases, then the swap (the engine's default chunks
/// and memory budget unless `memoryMiB` is given): of every projection (`names` nil) or of
/// the named ones, each beside a raw scan of the log.
func rebuild(_ name: String, _ names: [String]?, memoryMiB: Int? = nil) {
    streamingBenchmark(name, readOnly: false, scan: true) { l in
        let probe = HeapProbe(total: try l.read { try $0.head().seq })
        var options = RebuildOptions()
        if let memoryMiB { options.memoryBudget = memoryMiB << 20 }
        let results = try l.rebuild(names, options: options) { progress in probe.sample(progress.checkpoint) }
        precondition(results.count == (names?.count ?? ProjectionRegistry.standard.projections.count),
                     "not every projection rebuilt")
        return probe
    }
}

/// User + system CPU time of this process so far.
func cpuNanoseconds() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

func nanoseconds(_ body: () throws -> Void) rethrows -> Int {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Int(DispatchTime.now().uptimeNanoseconds - start)
}

/// Chain verification of every event (hash of previous ‖ bytes), read-only.
func verify() {
    streamingBenchmark("verify engine 1M", readOnly: true) { l in
        let probe = HeapProbe(total: try l.read { try $0.head().seq })
        var options = VerifyOptions()
        options.progressInterval = 10_000
        let report = try l.verify(options) { seq, _ in probe.sample(seq) }
        precondition(report.checked >= UInt64(MillionFixture.targetEvents), "verified \(report.checked) events")
        return probe
    }
}

/// `ledger export`'s stream (JSON Lines of every event), written nowhere.
func export() {
    streamingBenchmark("export engine 1M", readOnly: true) { l in
        let probe = HeapProbe(total: 0)
        var chunks = 0, bytes = 0
        let events = try l.exportJSONL { chunk in
            chunks += 1
            bytes += chunk.count
            // ~600 chunks of 1 MiB for 1M events: the first 300 are its first half.
            probe.sample(early: chunks <= 300)
        }
        precondition(events >= UInt64(MillionFixture.targetEvents), "exported \(events) events")
        blackHole(bytes)
        return probe
    }
}
