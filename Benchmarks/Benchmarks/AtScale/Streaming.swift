import ActionLedger
import Benchmark
import BenchSupport
import Foundation

// Whole-log passes over the 1M fixture: one iteration = one pass. Each records the heap
// it held (HeapProbe: malloc'd bytes in use, not the map's pages) over the first tenth of
// the log and over all of it — flat in the number of events means the two are equal.

func kb(_ name: String) -> BenchmarkMetric { .custom("\(name) KB", polarity: .prefersSmaller, useScalingFactor: false) }

func streamingConfig() -> Benchmark.Configuration {
    Benchmark.Configuration(metrics: [.wallClock, .throughput, kb("heap first 10%"), kb("heap all")],
                            warmupIterations: 0, maxDuration: .seconds(90), maxIterations: 3)
}

func record(_ benchmark: Benchmark, _ probe: HeapProbe) {
    benchmark.measurement(kb("heap first 10%"), probe.peakEarly / 1024)
    benchmark.measurement(kb("heap all"), probe.peak / 1024)
}

/// Rebuild of every inline projection from seq 1 into shadow databases, then the swap
/// (durable batches of 10 000 events).
func rebuild() {
    let state = Box<Ledger>()
    Benchmark("rebuild engine 1M", configuration: streamingConfig()) { benchmark in
        let l = state.get
        let probe = HeapProbe(total: try l.read { try $0.head().seq })
        let results = try l.rebuild { progress in probe.sample(progress.checkpoint) }
        precondition(results.count == ProjectionRegistry.standard.projections.count, "not every projection rebuilt")
        record(benchmark, probe)
    } setup: {
        state.value = try EngineSetup.ledger(at: try MillionFixture.path())
    } teardown: {
        state.value = nil
    }
}

/// Chain verification of every event (hash of previous ‖ bytes), read-only.
func verify() {
    let state = Box<Ledger>()
    Benchmark("verify engine 1M", configuration: streamingConfig()) { benchmark in
        let l = state.get
        let probe = HeapProbe(total: try l.read { try $0.head().seq })
        var options = VerifyOptions()
        options.progressInterval = 10_000
        let report = try l.verify(options) { seq, _ in probe.sample(seq) }
        precondition(report.checked >= UInt64(MillionFixture.targetEvents), "verified \(report.checked) events")
        record(benchmark, probe)
    } setup: {
        let path = try MillionFixture.path()
        do { _ = try EngineSetup.ledger(at: path) }
        state.value = try Ledger(path: path, options: Ledger.Options(readOnly: true))
    } teardown: {
        state.value = nil
    }
}

/// `ledger export`'s stream (JSON Lines of every event), written nowhere.
func export() {
    let state = Box<Ledger>()
    Benchmark("export engine 1M", configuration: streamingConfig()) { benchmark in
        let l = state.get
        let probe = HeapProbe(total: 0)
        var chunks = 0, bytes = 0
        let events = try l.exportJSONL { chunk in
            chunks += 1
            bytes += chunk.count
            // ~600 chunks of 1 MiB for 1M events: the first 60 are its first tenth.
            probe.sample(early: chunks <= 60)
        }
        precondition(events >= UInt64(MillionFixture.targetEvents), "exported \(events) events")
        blackHole(bytes)
        record(benchmark, probe)
    } setup: {
        let path = try MillionFixture.path()
        do { _ = try EngineSetup.ledger(at: path) }
        state.value = try Ledger(path: path, options: Ledger.Options(readOnly: true))
    } teardown: {
        state.value = nil
    }
}
