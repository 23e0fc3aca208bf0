import ActionLedger
import Baselines
import BenchSupport
import Foundation

/// The 1M fixture's figures of `make bench` in a plain process (for a profiler, or when a
/// full run does not fit): store bytes per event against the log's, then rounds of a raw
/// cursor scan of the log beside each rebuild, alternating which goes first.
enum FixturePasses {
    static func run(rounds: Int) throws {
        let path = try MillionFixture.path()
        let stat = try LMDBStat(path: path)
        let head = Double(try String(contentsOfFile: path + ".done", encoding: .utf8).split(separator: " ")[0])!
        let live = Double(stat.usedPages * stat.pageSize) / head, file = Double(stat.filePages * stat.pageSize) / head
        let log = Double((stat.databases["events"] ?? 0) * stat.pageSize) / head
        print(String(format: "store bytes per event: used %.0f B, file %.0f B, log %.0f B: %.2f× (file %.2f×)",
                     live, file, log, live / log, file / log))
        print("mdb_stat per database (DUPSORT sub-trees not counted):")
        for (name, pages) in stat.databases.sorted(by: { $0.value > $1.value }) where pages > 0 { print("  \(name): \(pages) pages") }
        let l = try EngineSetup.ledger(at: path)
        for round in 0..<rounds {
            // BENCH_ONLY=today,autoshipped: only those projections' rebuild (to profile it alone).
            let only = ProcessInfo.processInfo.environment["BENCH_ONLY"].map { $0.split(separator: ",").map(String.init) }
            for names in (only.map { [$0] } ?? [["today", "autoshipped"], nil]) as [[String]?] {
                var scan = 0.0, rebuild = 0.0
                func scanned() throws { scan = try seconds { _ = try scanLog(l) } }
                if round % 2 == 0 { try scanned() }
                // The heap above its level at the start (glibc's count), sampled at each progress report.
                let probe = HeapProbe(total: UInt64(head))
                let trace = ProcessInfo.processInfo.environment["HEAP_TRACE"] != nil, base = HeapProbe.inUse()
                var options = RebuildOptions()
                if let n = ProcessInfo.processInfo.environment["BENCH_WRITE_PART"].flatMap(Int.init) { options.writePart = n }
                // BENCH_BUDGET_MIB=4: the rebuilds' memory budget (RebuildOptions.memoryBudget), in MiB.
                if let n = ProcessInfo.processInfo.environment["BENCH_BUDGET_MIB"].flatMap(Int.init) { options.memoryBudget = n << 20 }
                rebuild = try seconds { _ = try l.rebuild(names, options: options) {
                    probe.sample($0.checkpoint)
                    if trace { print("  seq \($0.checkpoint): heap \((HeapProbe.inUse() - base) / 1024) KB") }
                } }
                if round % 2 == 1 { try scanned() }
                print(String(format: "rebuild %@: %.2f M ev/s (%.2f s); raw scan %.1f M ev/s; heap peak %.1f MB (%.1f MB over the first half)",
                             names?.joined(separator: "+") ?? "all", head / rebuild / 1e6, rebuild, head / scan / 1e6,
                             Double(probe.peak) / 1e6, Double(probe.peakEarly) / 1e6))
            }
        }
    }

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let t = Date()
        try body()
        return -t.timeIntervalSinceNow
    }

    static func scanLog(_ l: Ledger) throws -> Int {
        try l.read { r in
            var sum = 0
            try r.forEachRaw { _, v in
                sum &+= Int(v[0]) &+ Int(v[v.count - 1])
                return true
            }
            return sum
        }
    }
}
