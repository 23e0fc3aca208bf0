import Foundation

// Reads the JMH export of a `swift package benchmark` run (wall-clock percentiles per
// benchmark), computes each engine figure as a ratio to the baselines measured in the
// same run, checks the targets of issue 12 (one row each, in its order), prints a table
// and writes JSON. Workloads that are no target (BENCH_ALL=1, LEDGER_BIN) go to a second
// table when measured.
//
// ordo-one 1.38's JMH export carries a metric a benchmark did not record over from the
// benchmark exported before it (its secondaryMetrics dictionary is never reset): `load`
// drops a metric identical to the one of the element before, and the rows read only
// metrics their benchmark records.
//
// usage: bench-report <export-dir> <output.json>

struct Measured {
    let p50: Double  // microseconds per iteration (custom "… ns" metrics are converted)
    let p99: Double
    let iterations: Int
}

/// benchmark name → metric ("wall" or the custom metric's system name) → percentiles.
func load(_ dir: String) throws -> [String: [String: Measured]] {
    var out: [String: [String: Measured]] = [:]
    let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".jmh.json") }
    for file in files {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(file)"))
        guard let elements = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { continue }
        var previous: [String: Any] = [:]
        for e in elements {
            guard let full = e["benchmark"] as? String, let secondary = e["secondaryMetrics"] as? [String: Any] else { continue }
            defer { previous = secondary }
            // "package.benchmark.<Target>.<name with _ for spaces>"
            let name = full.split(separator: ".", maxSplits: 3).last.map(String.init)?
                .replacingOccurrences(of: "_", with: " ") ?? full
            let iterations = e["measurementIterations"] as? Int ?? 0
            for (metric, value) in secondary {
                if let carried = previous[metric] as? NSDictionary, carried.isEqual(value) { continue }
                guard let v = value as? [String: Any], let pct = v["scorePercentiles"] as? [String: Double],
                      let p50 = pct["50.0"], let p99 = pct["99.0"] else { continue }
                if metric == "Time (wall clock)" {
                    out[name, default: [:]]["wall"] = Measured(p50: p50, p99: p99, iterations: iterations)
                } else if metric.hasSuffix(" KB") {
                    out[name, default: [:]][String(metric.dropLast(3))] = Measured(p50: p50, p99: p99, iterations: iterations)
                } else if metric.hasSuffix(" ns") {
                    out[name, default: [:]][String(metric.dropLast(3))] = Measured(p50: p50 / 1000, p99: p99 / 1000,
                                                                                   iterations: iterations)
                }
            }
        }
    }
    return out
}

struct Row {
    var workload: String
    var figure: String
    var value: Double?
    var unit: String
    var vsLMDB: Double?
    var vsSQLite: Double?
    var target: String
    var met: Bool?
    var note = ""
}

guard CommandLine.arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: bench-report <export-dir> <output.json>\n".utf8))
    exit(2)
}
let m = try load(CommandLine.arguments[1])
var rows: [Row] = []

/// Operations per second from a p50 in µs.
func rate(_ name: String, _ metric: String, per: Double) -> Double? { m[name]?[metric].map { per * 1e6 / $0.p50 } }
func ratio(_ a: Double?, _ b: Double?) -> Double? { a.flatMap { a in b.map { a / $0 } } }
func fmt(_ v: Double?, _ digits: Int = 0) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "-" }
@MainActor func missing(_ workload: String, _ why: String) {
    rows.append(Row(workload: workload, figure: "-", value: nil, unit: "", target: "", met: nil, note: why))
}

/// Rows of workloads that are no target of issue 12, printed in a second table when measured.
var other: [Row] = []
/// The fixture's events (from the store-bytes benchmark), else the nominal million.
let fixtureEvents = m["store bytes engine 1M"]?["events count"]?.p50 ?? 1e6

// Rebuilds, each beside a raw cursor scan of the same log in the same iterations.
for (name, label, minRate) in [("rebuild today+autoshipped engine 1M", "rebuild Today + auto-shipped @1M", 2e6),
                               ("rebuild engine 1M", "rebuild all derived state @1M", 1e6)] {
    guard let r = rate(name, "pass", per: fixtureEvents) else { missing(label, "not measured in this run"); continue }
    let scan = rate(name, "scan", per: fixtureEvents)
    rows.append(Row(workload: label, figure: "events/s", value: r, unit: "ev/s", vsLMDB: ratio(r, scan), vsSQLite: nil,
                    target: "≥\(Int(minRate / 1e6))M ev/s", met: r >= minRate,
                    note: String(format: "raw scan %@ M ev/s; %.2f s per pass of %.2fM events, %@ s of CPU (process)",
                                 fmt(scan.map { $0 / 1e6 }, 1), m[name]!["pass"]!.p50 / 1e6, fixtureEvents / 1e6,
                                 fmt(m[name]?["cpu"].map { $0.p50 / 1e6 }, 2))))
}

for n in [1, 10, 100, 1000] {
    let b = "ingest \(n)/txn"
    guard let e = rate(b, "engine", per: Double(n)) else {
        if n == 1000 { missing(b, "not measured in this run") }
        continue
    }
    let l = rate(b, "lmdb", per: Double(n)), s = rate(b, "sqlite", per: Double(n))
    var row = Row(workload: b, figure: "events/s (p50 txn)", value: e, unit: "ev/s",
                  vsLMDB: ratio(e, l), vsSQLite: ratio(e, s), target: "")
    row.note = "lmdb \(fmt(l)), sqlite \(fmt(s)) ev/s"
    // The floor of any design that meets the requirements (Baselines/CheapestShapeLog),
    // in the same iterations: a target above it is out of reach for every design.
    if let f = rate(b, "floor", per: Double(n)) {
        row.note += "; the cheapest shape's floor \(fmt(f)) ev/s (\(fmt(ratio(f, l), 2))× lmdb, \(fmt(ratio(f, s), 2))× sqlite;"
            + " engine at \(fmt(ratio(e, f), 2))× it)"
    }
    if n == 1000 {
        row.workload = "ingest 1000/txn, folded to the head"
        row.target = "≥0.4× lmdb, ≥1.5× sqlite"
        if let a = row.vsLMDB, let b = row.vsSQLite { row.met = a >= 0.4 && b >= 1.5 }
        rows.append(row)
    } else {
        other.append(row)
    }
}

/// Approvals per iteration of the concurrent workloads (`approvalBurst` in Benchmarks/Durable).
let burst = 256.0

/// The approvals rows: engine rate and its single-approval rate, paired in the same iterations.
func approvals(_ b: String) -> (rate: Double, single: Double)? {
    guard let r = rate(b, "engine", per: burst), let single = rate(b, "single", per: 1) else { return nil }
    return (r, single)
}
for callers in [1, 4, 16, 64] {
    let b = "approvals \(callers) callers"
    guard let measured = approvals(b) else {
        if callers == 16 { missing("16 concurrent approvers", "not measured in this run") }
        continue
    }
    let (r, single) = measured
    let raw = rate(b, "lmdb", per: burst), sq = rate(b, "sqlite", per: burst)
    var row = Row(workload: "\(callers) concurrent approvers", figure: "approvals/s", value: r, unit: "/s",
                  vsLMDB: ratio(r, raw), vsSQLite: ratio(r, sq), target: "")
    row.note = String(format: "×%.1f the single-approval rate (%.0f/s); sqlite, \(callers) writers: %@/s; "
                      + "raw lmdb, \(callers) threads, one commit each: %@/s", r / single, single, fmt(sq), fmt(raw))
    if callers == 16 {
        row.target = "≥10× single rate, ≥2× sqlite (16 writers)"
        if let v = row.vsSQLite { row.met = r / single >= 10 && v >= 2 }
        rows.append(row)
        let random = "approvals 16 callers random 100k"
        if let (rr, rs) = approvals(random).map({ ($0.rate, $0.single) }) {
            rows.append(Row(workload: "16 approvers, random over 100k pending", figure: "approvals/s", value: rr, unit: "/s",
                            target: "reported beside the clustered case", met: nil,
                            note: String(format: "%.2f× the clustered rate above; ×%.1f its own single-approval rate (%.0f/s)",
                                         rr / r, rr / rs, rs)))
        } else { missing("16 approvers, random over 100k pending", "not measured in this run") }
    } else {
        other.append(row)
    }
}

// Store bytes per event: the pages in use (the file less its free list: a compacted copy's
// size) over the `events` database's pages; the file as built (free pages included) in the notes.
if let sb = m["store bytes engine 1M"], let live = sb["store used"], let file = sb["store file"], let log = sb["events"] {
    let perEvent = { (kb: Measured) in kb.p50 * 1024 / fixtureEvents }
    let ratio = perEvent(live) / perEvent(log)
    rows.append(Row(workload: "store bytes per event @1M", figure: "used pages / event", value: perEvent(live), unit: "B",
                    vsLMDB: ratio, vsSQLite: nil, target: "≤2× the log's own", met: ratio <= 2,
                    note: String(format: "log (events db) %.0f B/event; file as built %.0f B/event (%.2f×, free pages included)",
                                 perEvent(log), perEvent(file), perEvent(file) / perEvent(log))))
} else { missing("store bytes per event @1M", "not measured in this run") }

// Kept targets.
if let e = m["single commit"]?["engine"] {
    let l = m["single commit"]?["lmdb"], s = m["single commit"]?["sqlite"]
    var row = Row(workload: "single durable approval", figure: "p50 latency", value: e.p50, unit: "µs",
                  vsLMDB: l.map { e.p50 / $0.p50 }, vsSQLite: s.map { e.p50 / $0.p50 }, target: "p50 ≤1.3× lmdb commit")
    row.met = row.vsLMDB.map { $0 <= 1.3 }
    row.note = "lmdb commit p50 \(fmt(l?.p50)) µs, sqlite p50 \(fmt(s?.p50)) µs"
    rows.append(row)
    other.append(Row(workload: "single durable approval", figure: "p99 latency", value: e.p99, unit: "µs",
                     vsLMDB: l.map { e.p99 / $0.p99 }, vsSQLite: s.map { e.p99 / $0.p99 }, target: "",
                     note: "lmdb commit p99 \(fmt(l?.p99)) µs"))
} else { missing("single durable approval", "not measured in this run") }

// Signed taps (issue 13): a proof's verification against the durable commit it rides on.
if let e = m["signed single commit"]?["engine"], let l = m["signed single commit"]?["lmdb"],
   let v = m["signed single commit"]?["verify"] {
    var row = Row(workload: "single signed approval", figure: "p50 latency", value: e.p50, unit: "µs",
                  vsLMDB: e.p50 / (l.p50 + v.p50), vsSQLite: nil, target: "p50 ≤1.3× (lmdb commit + 1 verify)")
    row.met = row.vsLMDB.map { $0 <= 1.3 }
    row.note = String(format: "lmdb commit p50 %.0f µs + ECDSA P-256 verify p50 %.0f µs", l.p50, v.p50)
    rows.append(row)
} else { missing("single signed approval", "not measured in this run") }
if let r = rate("signed approvals 16 callers", "engine", per: burst), let u = rate("signed approvals 16 callers", "unsigned", per: burst) {
    var row = Row(workload: "signed approvals, 16 callers", figure: "approvals/s", value: r, unit: "/s", vsLMDB: nil, vsSQLite: nil,
                  target: "≥0.8× unsigned, same callers")
    row.met = r / u >= 0.8
    row.note = String(format: "unsigned %.0f/s: ×%.2f", u, r / u)
    if let sc = m["signed approvals 16 callers"]?["engine cpu"]?.p50, let uc = m["signed approvals 16 callers"]?["unsigned cpu"]?.p50 {
        // CPU per approval (all threads), and the rate the machine's cores allow at that cost.
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        row.note += String(format: "; CPU per approval %.0f µs signed, %.0f µs unsigned: %d cores allow %.0f/s and %.0f/s (×%.2f)",
                            sc / burst, uc / burst, Int(cores), cores * burst * 1e6 / sc, cores * burst * 1e6 / uc, uc / sc)
    }
    rows.append(row)
} else { missing("signed approvals, 16 callers", "not measured in this run") }

@MainActor func query(_ name: String, _ label: String, p99Max: Double?) {
    guard let q = m[name]?["wall"] else {
        if p99Max != nil { missing(label, "not measured in this run") }
        return
    }
    let row = Row(workload: label, figure: "p99 latency", value: q.p99, unit: "µs",
                  target: p99Max.map { "p99 ≤\(Int($0)) µs" } ?? "", met: p99Max.map { q.p99 <= $0 },
                  note: String(format: "p50 %.1f µs", q.p50))
    if p99Max != nil { rows.append(row) } else { other.append(row) }
}
query("query today-first-page engine 1M", "Today first page @1M", p99Max: 1000)
query("query who-approved engine 1M", "who-approved @1M", p99Max: 50)
query("query autoshipped-24h engine 1M", "auto-shipped 24h @1M", p99Max: nil)

if let r = rate("verify engine 1M", "pass", per: fixtureEvents) {
    rows.append(Row(workload: "verify @1M", figure: "events/s", value: r, unit: "ev/s", target: "≥2M ev/s", met: r >= 2e6,
                    note: String(format: "%.2f s per pass", m["verify engine 1M"]!["pass"]!.p50 / 1e6)))
} else { missing("verify @1M", "not measured in this run") }
if let r = rate("export engine 1M", "pass", per: fixtureEvents) {
    other.append(Row(workload: "export @1M", figure: "events/s", value: r, unit: "ev/s", target: "", met: nil,
                     note: String(format: "%.2f s per pass", m["export engine 1M"]!["pass"]!.p50 / 1e6)))
}

// Heap: flat when the peak over the whole log is within 25 % (+512 KB) of its peak over the first half.
for (name, label) in [("rebuild today+autoshipped engine 1M", "rebuild Today + auto-shipped @1M"),
                      ("rebuild today+autoshipped engine 1M, 4 MiB budget", "rebuild Today + auto-shipped @1M, 4 MiB budget"),
                      ("rebuild engine 1M", "rebuild all @1M"), ("verify engine 1M", "verify @1M"), ("export engine 1M", "export @1M")] {
    guard let early = m[name]?["heap first half"]?.p50, let all = m[name]?["heap all"]?.p50 else { continue }
    let row = Row(workload: label, figure: "heap peak (first half → all)", value: all, unit: "KB",
                  target: "flat in events", met: all <= early * 1.25 + 512,
                  note: String(format: "%.0f KB over the first half of the events", early))
    if name.hasPrefix("export") { other.append(row) } else { rows.append(row) }
}

if let p = m["process approve engine 1M"]?["wall"] {
    other.append(Row(workload: "`ledger approve` process @1M", figure: "median", value: p.p50 / 1000, unit: "ms",
                     target: "", met: nil, note: String(format: "p99 %.1f ms", p.p99 / 1000)))
}

// Table. "vs raw": against raw LMDB measured in the same iterations — the baseline log for
// ingest and commits, a cursor scan of the same log for rebuilds, the `events` database's
// own pages for store bytes.
@MainActor func table(_ rows: [Row]) {
    print("| workload | figure | value | vs raw | vs SQLite | target | met | notes |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows {
        let met = r.met.map { $0 ? "yes" : "**no**" } ?? ""
        print("| \(r.workload) | \(r.figure) | \(fmt(r.value, r.value ?? 0 < 100 ? 1 : 0)) \(r.unit) | \(r.vsLMDB.map { String(format: "%.2f×", $0) } ?? "-") "
            + "| \(r.vsSQLite.map { String(format: "%.2f×", $0) } ?? "-") | \(r.target) | \(met) | \(r.note) |")
    }
}
table(rows)
if !other.isEmpty {
    print("\nOther workloads (no target of issue 12):\n")
    table(other)
}

// JSON
func jsonRow(_ r: Row) -> [String: Any] {
    var o: [String: Any] = ["workload": r.workload, "figure": r.figure, "unit": r.unit, "target": r.target, "notes": r.note]
    o["value"] = r.value ?? NSNull()
    o["ratio_vs_raw"] = r.vsLMDB ?? NSNull()
    o["ratio_vs_sqlite"] = r.vsSQLite ?? NSNull()
    o["met"] = r.met ?? NSNull()
    return o
}
var u = utsname()
_ = uname(&u)
let machine = withUnsafeBytes(of: u.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
let json: [String: Any] = [
    "generated": ISO8601DateFormatter().string(from: Date()),
    "machine": ["arch": machine, "cpus": ProcessInfo.processInfo.activeProcessorCount,
                "memory_bytes": ProcessInfo.processInfo.physicalMemory],
    "event_bytes": 250,
    "rows": rows.map(jsonRow),
    "other_rows": other.map(jsonRow),
    "benchmarks": m.mapValues { metrics in
        metrics.mapValues { ["p50_us": $0.p50, "p99_us": $0.p99, "iterations": $0.iterations] as [String: Any] }
    },
]
let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
try data.write(to: URL(fileURLWithPath: CommandLine.arguments[2]))
print("\nwrote \(CommandLine.arguments[2])")
