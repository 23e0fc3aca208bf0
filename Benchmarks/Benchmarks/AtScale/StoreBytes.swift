import Baselines
import Benchmark
import BenchSupport
import Foundation

/// The 1M fixture's size against its log's: pages in use (the log, its indexes and the
/// projections: the file less its free list, what a compacted copy would hold) and pages
/// handed out by the file (free ones included), beside the `events` database's own pages. Read with
/// LMDB's mdb_stat API (Baselines/LMDBStat) on the fixture as built, before any other
/// benchmark opens it (a rebuild leaves its old generation's pages on the free list).
/// Values are KB, recorded in every (cheap) iteration.
func storeBytes() {
    let stat = Box<(LMDBStat, Int)>()
    let config = Benchmark.Configuration(metrics: [.wallClock, .throughput, kb("store used"), kb("store file"), kb("events"), kb("events count")],
                                         warmupIterations: 0, maxIterations: 3)
    Benchmark("store bytes engine 1M", configuration: config) { benchmark in
        let (s, events) = stat.get
        let kib = s.pageSize / 1024
        benchmark.measurement(kb("store used"), s.usedPages * kib)
        benchmark.measurement(kb("store file"), s.filePages * kib)
        benchmark.measurement(kb("events"), (s.databases["events"] ?? 0) * kib)
        // Not KB: the number of events, passed through the same metric plumbing.
        benchmark.measurement(kb("events count"), events)
    } setup: {
        let path = try MillionFixture.path()
        let s = try LMDBStat(path: path)
        guard s.databases["events"] != nil else { fatalError("no events database in \(path)") }
        let text = try String(contentsOfFile: path + ".done", encoding: .utf8)
        let events = Int(text.split(separator: " ")[0])!
        // The breakdown goes to stderr (the report reads only the totals).
        let lines = s.databases.sorted { $0.value > $1.value }.map { "  \($0.key): \($0.value) pages" }
        FileHandle.standardError.write(Data(("store bytes of \(path): \(events) events, \(s.filePages) file pages, "
            + "\(s.freePages) free, \(s.usedPages) used; mdb_stat per database (DUPSORT sub-trees not counted):\n" + lines.joined(separator: "\n") + "\n").utf8))
        stat.value = (s, events)
    } teardown: {
        stat.value = nil
    }
}
