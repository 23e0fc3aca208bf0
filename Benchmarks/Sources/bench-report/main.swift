import Foundation

// Reads the JMH export of a `swift package benchmark` run (wall-clock percentiles per
// benchmark), computes each engine figure as a ratio to the baselines measured in the
// same run, checks the targets of issue 5, prints a table and writes JSON.
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
        for e in elements {
            guard let full = e["benchmark"] as? String, let secondary = e["secondaryMetrics"] as? [String: Any] else { continue }
            // "package.benchmark.<Target>.<name with _ for spaces>"
            let name = full.split(separator: ".", maxSplits: 3).last.map(String.init)?
                .replacingOccurrences(of: "_", with: " ") ?? full
            let iterations = e["measurementIterations"] as? Int ?? 0
            for (metric, value) in secondary {
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

for n in [1, 10, 100, 1000] {
    let b = "ingest \(n)/txn"
    let e = rate(b, "engine", per: Double(n)), l = rate(b, "lmdb", per: Double(n)), s = rate(b, "sqlite", per: Double(n))
    var row = Row(workload: "ingest \(n)/txn", figure: "events/s (p50 txn)", value: e, unit: "ev/s",
                  vsLMDB: ratio(e, l), vsSQLite: ratio(e, s), target: "")
    row.note = "lmdb \(fmt(l)), sqlite \(fmt(s)) ev/s"
    if n == 1000 {
        row.target = "≥0.5× lmdb, ≥1.5× sqlite"
        if let a = row.vsLMDB, let b = row.vsSQLite { row.met = a >= 0.5 && b >= 1.5 }
    }
    rows.append(row)
}

if let e = m["single commit"]?["engine"] {
    let l = m["single commit"]?["lmdb"], s = m["single commit"]?["sqlite"]
    var row = Row(workload: "single durable approval", figure: "p50 latency", value: e.p50, unit: "µs",
                  vsLMDB: l.map { e.p50 / $0.p50 }, vsSQLite: s.map { e.p50 / $0.p50 }, target: "p50 ≤1.3× lmdb commit")
    row.met = row.vsLMDB.map { $0 <= 1.3 }
    row.note = "lmdb commit p50 \(fmt(l?.p50)) µs, sqlite p50 \(fmt(s?.p50)) µs"
    rows.append(row)
    rows.append(Row(workload: "single durable approval", figure: "p99 latency", value: e.p99, unit: "µs",
                    vsLMDB: l.map { e.p99 / $0.p99 }, vsSQLite: s.map { e.p99 / $0.p99 }, target: "",
                    note: "lmdb commit p99 \(fmt(l?.p99)) µs"))
} else { missing("single durable approval", "not measured in this run") }

for callers in [1, 4, 16, 64] {
    let b = "approvals \(callers) callers"
    guard let r = rate(b, "engine", per: 64), let single = rate(b, "single", per: 1) else {
        missing("approvals, \(callers) callers", "not measured in this run")
        continue
    }
    let raw = rate(b, "lmdb", per: 64)
    var row = Row(workload: "approvals, \(callers) callers", figure: "approvals/s", value: r, unit: "/s",
                  vsLMDB: ratio(r, raw), vsSQLite: nil, target: "")
    row.note = String(format: "×%.1f the single-approval rate (%.0f/s); raw lmdb, \(callers) threads, one commit each: %@/s",
                      r / single, single, fmt(raw))
    if callers == 16 {
        row.target = "≥10× single-approval rate"
        row.met = r / single >= 10
    }
    rows.append(row)
}

// Signed taps (issue 13): a proof's verification against the durable commit it rides on.
if let e = m["signed single commit"]?["engine"], let l = m["signed single commit"]?["lmdb"],
   let v = m["signed single commit"]?["verify"] {
    var row = Row(workload: "single signed approval", figure: "p50 latency", value: e.p50, unit: "µs",
                  vsLMDB: e.p50 / (l.p50 + v.p50), vsSQLite: nil, target: "p50 ≤1.3× (lmdb commit + 1 verify)")
    row.met = row.vsLMDB.map { $0 <= 1.3 }
    row.note = String(format: "lmdb commit p50 %.0f µs + ECDSA P-256 verify p50 %.0f µs", l.p50, v.p50)
    rows.append(row)
} else { missing("single signed approval", "not measured in this run") }
if let r = rate("signed approvals 16 callers", "engine", per: 64), let u = rate("signed approvals 16 callers", "unsigned", per: 64) {
    var row = Row(workload: "signed approvals, 16 callers", figure: "approvals/s", value: r, unit: "/s", vsLMDB: nil, vsSQLite: nil,
                  target: "≥0.8× unsigned, same callers")
    row.met = r / u >= 0.8
    row.note = String(format: "unsigned %.0f/s: ×%.2f", u, r / u)
    rows.append(row)
} else { missing("signed approvals, 16 callers", "not measured in this run") }

@MainActor func query(_ name: String, _ label: String, p99Max: Double?) {
    guard let q = m[name]?["wall"] else { missing(label, "not measured in this run"); return }
    rows.append(Row(workload: label, figure: "p99 latency", value: q.p99, unit: "µs",
                    target: p99Max.map { "p99 ≤\(Int($0)) µs" } ?? "", met: p99Max.map { q.p99 <= $0 },
                    note: String(format: "p50 %.1f µs", q.p50)))
}
query("query today-first-page engine 1M", "Today first page @1M", p99Max: 1000)
query("query who-approved engine 1M", "who-approved @1M", p99Max: 50)
query("query autoshipped-24h engine 1M", "auto-shipped 24h @1M", p99Max: nil)

for (name, label, minRate) in [("rebuild engine 1M", "rebuild @1M", 1e6), ("verify engine 1M", "verify @1M", 2e6),
                               ("export engine 1M", "export @1M", 0)] {
    guard let r = rate(name, "pass", per: 1e6) else { missing(label, "not measured in this run"); continue }
    rows.append(Row(workload: label, figure: "events/s", value: r, unit: "ev/s",
                    target: minRate > 0 ? "≥\(Int(minRate / 1e6))M ev/s" : "", met: minRate > 0 ? r >= minRate : nil,
                    note: String(format: "%.2f s per pass of 1.00M events", m[name]!["pass"]!.p50 / 1e6)))
    // Flat: the peak heap over the whole log within 25 % (+512 KB) of its peak over the first tenth.
    if let early = m[name]?["heap first 10%"]?.p50, let all = m[name]?["heap all"]?.p50 {
        rows.append(Row(workload: label, figure: "heap peak (first 10% → all)", value: all, unit: "KB",
                        target: "flat in events", met: all <= early * 1.25 + 512,
                        note: String(format: "%.0f KB over the first 10%% of events", early)))
    }
}

if let p = m["process approve engine 1M"]?["wall"] {
    rows.append(Row(workload: "`ledger approve` process @1M", figure: "median", value: p.p50 / 1000, unit: "ms",
                    target: "≤25 ms", met: p.p50 <= 25_000, note: String(format: "p99 %.1f ms", p.p99 / 1000)))
} else { missing("`ledger approve` process", "not measured in this run") }

// Table
print("| workload | figure | value | vs raw LMDB | vs SQLite | target | met | notes |")
print("|---|---|---|---|---|---|---|---|")
for r in rows {
    let met = r.met.map { $0 ? "yes" : "**no**" } ?? ""
    print("| \(r.workload) | \(r.figure) | \(fmt(r.value, r.value ?? 0 < 100 ? 1 : 0)) \(r.unit) | \(r.vsLMDB.map { String(format: "%.2f×", $0) } ?? "-") "
        + "| \(r.vsSQLite.map { String(format: "%.2f×", $0) } ?? "-") | \(r.target) | \(met) | \(r.note) |")
}

// JSON
var u = utsname()
_ = uname(&u)
let machine = withUnsafeBytes(of: u.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
let json: [String: Any] = [
    "generated": ISO8601DateFormatter().string(from: Date()),
    "machine": ["arch": machine, "cpus": ProcessInfo.processInfo.activeProcessorCount,
                "memory_bytes": ProcessInfo.processInfo.physicalMemory],
    "event_bytes": 250,
    "rows": rows.map { r -> [String: Any] in
        var o: [String: Any] = ["workload": r.workload, "figure": r.figure, "unit": r.unit, "target": r.target, "notes": r.note]
        o["value"] = r.value ?? NSNull()
        o["ratio_vs_lmdb"] = r.vsLMDB ?? NSNull()
        o["ratio_vs_sqlite"] = r.vsSQLite ?? NSNull()
        o["met"] = r.met ?? NSNull()
        return o
    },
    "benchmarks": m.mapValues { metrics in
        metrics.mapValues { ["p50_us": $0.p50, "p99_us": $0.p99, "iterations": $0.iterations] as [String: Any] }
    },
]
let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
try data.write(to: URL(fileURLWithPath: CommandLine.arguments[2]))
print("\nwrote \(CommandLine.arguments[2])")
