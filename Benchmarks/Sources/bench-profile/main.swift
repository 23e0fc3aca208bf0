import ActionLedger
import BenchSupport
import Foundation

// A plain driver to run one workload under a profiler (perf record -g, valgrind --tool=callgrind):
//   bench-profile ingest <events>     proposals through the engine, 1000 per group
//   bench-profile ingest-durable <n>  the same, durable: time and pages written per transaction
//   bench-profile approve <count>     single approvals, one command per transaction
//   bench-profile two-taps <count>    medium stakes: 16 actions reviewed, then approved, then the next 16
//   bench-profile bursts <n>          make bench's 16-approver shape, durable: n bursts of 256
//                                     approvals from 16 callers, each followed by 8 single ones;
//                                     the ratio of the p50s and the transactions each burst took
//   bench-profile signed <count>      16 callers, `count` signed approvals (durable), signed
//                                     before the measured part; prints the rate and CPU per approval
//   bench-profile handoff <count>     empty jobs: the writer hand-off and an empty transaction
//   bench-profile reads <count>       what a tap's command reads, each timed alone
//   bench-profile sha256 <count>      one SHA-256 call's cost at 40, 100 and 300 bytes
//   bench-profile floor <events>      raw LMDB writing what the engine wrote (Floor.swift)
//   bench-profile floor-rebuild       the sorted-append floor for the fixture's projections
//   bench-profile callers-floor <n>   16 callers (verifying P-256, or not) over a raw LMDB group
//                                     commit, beside the engine's callers (CallersFloor.swift)
//   bench-profile single-floor <n>   single durable approvals: raw commit, the cheapest approval's
//                                     commit over raw LMDB, the engine (SingleFloor.swift)
//   bench-profile rebuild <events>    every projection rebuilt (of $BENCH_STORE, else of a fresh
//                                     ingest; $BENCH_BATCH events per transaction)
//   bench-profile fixture             builds the cached 1M-event fixture (make bench would)
//   bench-profile fixture-passes <n>  on the fixture: store bytes per event, then n rounds of a
//                                     raw log scan beside a rebuild of Today + auto-shipped
//                                     and of everything (durable, as in make bench); with
//                                     HEAP_TRACE=1, the heap at each progress report
// Set-up and the measured part use unsafeNoSync (CPU profiles), except `concurrent`,
// `signed`, `ingest-durable` and `floor`, which measure durable commits.

let args = CommandLine.arguments
let workload = args.count > 1 ? args[1] : "ingest"
let count = args.count > 2 ? Int(args[2])! : 20_000
let path = Scratch.fresh("profile-\(workload)")
// Group commit only matters when commits wait for the disk: that workload is durable.
let l = try EngineSetup.ledger(at: path, unsafeNoSync: !["concurrent", "signed", "ingest-durable", "bursts", "callers-floor", "single-floor"].contains(workload))
let started = Date()
switch workload {
case "ingest":
    print(String(format: "%.2f µs per proposal in the engine (no fsync)", try ingest(l, count) / Double(count) * 1e6))
case "ingest-durable":
    // Durable: the time per proposal beside the pages each transaction wrote.
    let txnsBefore = try lastTxnId(path), bytesBefore = writtenBytes()
    let seconds = try ingest(l, count)
    let txns = try lastTxnId(path) - txnsBefore
    print(String(format: "%.2f µs per proposal (durable), %d transactions, %.0f pages written per transaction",
                 seconds / Double(count) * 1e6, txns, Double(writtenBytes() - bytesBefore) / 4096 / Double(txns)))
case "approve":
    try EngineSetup.proposePending(l, prefix: "p", count: count)
    let t = Date()
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    for i in 0..<count {
        let start = DispatchTime.now().uptimeNanoseconds
        try l.execute(CommandRequest(.tap(.approve, actionId: Sample.actionId("p", i), device: Sample.device(0)), now: Sample.base))
        samples.append(DispatchTime.now().uptimeNanoseconds - start)
    }
    samples.sort()
    print(String(format: "%.1f µs per approval, p50 %.1f µs, p99 %.1f µs (no fsync: CPU, writes and the hand-off to the writer)",
                 -t.timeIntervalSinceNow / Double(count) * 1e6, Double(samples[count / 2]) / 1e3, Double(samples[count * 99 / 100]) / 1e3))
case "two-taps":
    // Medium stakes, a review then an approval of each action, in groups of 16 (no fsync):
    // the writer's CPU per tap when the second tap follows the first.
    try EngineSetup.proposePending(l, prefix: "p", count: count, stakes: .medium)
    let t = Date()
    // 16 actions reviewed, then those approved, then the next 16: a person's taps on one
    // action come close together.
    for g in stride(from: 0, to: count, by: 16) {
        for step in [TapStep.review, .approve] {
            try EngineSetup.mustSucceed(l, (g..<min(g + 16, count)).map {
                CommandRequest(.tap(step, actionId: Sample.actionId("p", $0), device: Sample.device(0)), now: Sample.base)
            })
        }
    }
    print(String(format: "%.1f µs per tap (review, then approve; groups of 16, no fsync)", -t.timeIntervalSinceNow / Double(2 * count) * 1e6))
case "bursts":
    // make bench's shape: bursts of 256 approvals from 16 callers (16 each), then 8 single ones.
    let callers = 16, bursts = count
    try EngineSetup.proposePending(l, prefix: "p", count: bursts * 264)
    let gang = Gang(callers)
    var txnsPerBurst: [Int] = [], burstNs: [UInt64] = [], singleNs: [UInt64] = []
    for b in 0..<bursts {
        let base = b * 264
        let t0 = try lastTxnId(path)
        let s = DispatchTime.now().uptimeNanoseconds
        gang.run { i in for j in 0..<16 { EngineSetup.approve(l, Sample.actionId("p", base + i * 16 + j)) } }
        burstNs.append(DispatchTime.now().uptimeNanoseconds - s)
        txnsPerBurst.append(try lastTxnId(path) - t0)
        let s2 = DispatchTime.now().uptimeNanoseconds
        for k in 0..<8 { EngineSetup.approve(l, Sample.actionId("p", base + 256 + k)) }
        singleNs.append((DispatchTime.now().uptimeNanoseconds - s2) / 8)
    }
    burstNs.sort(); singleNs.sort()
    let rate = 256e9 / Double(burstNs[bursts / 2]), single = 1e9 / Double(singleNs[bursts / 2])
    print(String(format: "bursts: %.0f/s, single %.0f/s, ratio %.2f; transactions per burst %@", rate, single, rate / single,
                 txnsPerBurst.sorted().map(String.init).joined(separator: ",")))
case "concurrent":
    // 16 callers, `count` approvals in all; prints write transactions per approval.
    let callers = 16
    try EngineSetup.proposePending(l, prefix: "p", count: count)
    let before = try l.read { try $0.head().seq }
    let txnsBefore = try lastTxnId(path)
    let bytesBefore = writtenBytes()
    let t = Date()
    let gang = Gang(callers)
    gang.run { i in
        for j in stride(from: i, to: count, by: callers) {
            _ = try! l.execute(CommandRequest(.tap(.approve, actionId: Sample.actionId("p", j), device: Sample.device(0)),
                                              now: Sample.base))
        }
    }
    let elapsed = -t.timeIntervalSinceNow
    let txns = try lastTxnId(path) - txnsBefore
    let pages = Double(writtenBytes() - bytesBefore) / 4096 / Double(txns)
    print(String(format: "%d approvals in %.3f s (%.0f/s), %d transactions, %.1f per group, %.1f pages written per commit",
                 try l.read { try $0.head().seq } - before, elapsed, Double(count) / elapsed, txns,
                 Double(count) / Double(txns), pages))
case "approve-group":
    // The writer's CPU per approval inside a group: `count` approvals as groups of 16 (one
    // transaction each, no fsync), i.e. what a group of 16 callers costs under the lock.
    // The requests are built before the clock, as callers build theirs before the writer
    // sees them (until the tenth pass this timed their command ids' randomness too).
    try EngineSetup.proposePending(l, prefix: "p", count: count)
    let groups = stride(from: 0, to: count, by: 16).map { g in
        (g..<min(g + 16, count)).map {
            CommandRequest(.tap(.approve, actionId: Sample.actionId("p", $0), device: Sample.device(0)), now: Sample.base)
        }
    }
    let t = Date()
    for group in groups { try EngineSetup.mustSucceed(l, group) }
    print(String(format: "%.1f µs per approval in groups of 16 (no fsync)", -t.timeIntervalSinceNow / Double(count) * 1e6))
case "signed":
    let callers = 16, signer = BenchSigner()
    try signer.link(l)
    try EngineSetup.proposePending(l, prefix: "s", count: count)
    let requests = try (0..<count).map { try signer.approval(l, Sample.actionId("s", $0)) }
    func cpuSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
    let cpu0 = cpuSeconds()
    let t = Date()
    let gang = Gang(callers)
    gang.run { i in
        for j in stride(from: i, to: count, by: callers) { precondition(try! l.execute(requests[j]).events.count == 1) }
    }
    let elapsed = -t.timeIntervalSinceNow
    let cpu1 = cpuSeconds()
    print(String(format: "%d signed approvals in %.3f s (%.0f/s), %.0f µs CPU each", count, elapsed, Double(count) / elapsed,
                 (cpu1 - cpu0) / Double(count) * 1e6))
case "handoff":
    // An empty job through the writer: the hand-off both ways plus an empty transaction.
    let t = Date()
    for _ in 0..<count { try l.append(verbatim: []) }
    print(String(format: "%.1f µs per empty job", -t.timeIntervalSinceNow / Double(count) * 1e6))
    let u = Date()
    for _ in 0..<count { try l.environment.write { _ in } }
    print(String(format: "%.1f µs per empty write transaction on the calling thread", -u.timeIntervalSinceNow / Double(count) * 1e6))
case "reads":
    // What a tap's command reads, each timed alone over `count` pending actions.
    try EngineSetup.proposePending(l, prefix: "p", count: count)
    func time(_ name: String, _ body: (LogReader, Int) throws -> Void) throws {
        let t = Date()
        try l.read { r in for i in 0..<count { try body(r, i) } }
        print(String(format: "%-14@ %6.2f µs", name as NSString, -t.timeIntervalSinceNow / Double(count) * 1e6))
    }
    try time("actionState") { r, i in _ = try r.actionState(Sample.actionId("p", i)) }
    try time("deviceState") { r, _ in _ = try r.deviceState(Sample.device(0)) }
    try time("policy") { r, _ in _ = try r.policy() }
    try time("command") { r, i in _ = try r.command("cmd-\(i)") }
    try time("head") { r, _ in _ = try r.head() }
    try time("encode+chain") { r, i in
        let e = try r.event(UInt64(i % 1000 + 2))!.event
        let bytes = EventCodec.encode(e)
        _ = bytes.withUnsafeBytes { Digest.sha256(.zero, $0) }
    }
    try time("decode") { r, i in _ = try r.event(UInt64(i % 1000 + 2)) }
case "floor":
    try Floor.run(events: count)
case "sha256":
    // What one SHA-256 call costs through swift-crypto, by input size (the chain hashes
    // ~280 bytes per event; each projection entry's digest term hashes 20–300 bytes).
    for size in [40, 100, 300] {
        let data = [UInt8](repeating: 7, count: size)
        var acc = Digest.zero
        let t = Date()
        for _ in 0..<count { acc = acc.adding(data.withUnsafeBytes { Digest.sha256($0) }) }
        print(String(format: "sha256 %d bytes: %.3f µs", size, -t.timeIntervalSinceNow / Double(count) * 1e6), acc.hex.prefix(4))
    }
case "floor-rebuild":
    try Floor.rebuild()
case "callers-floor":
    try CallersFloor.run(approvals: count)
case "single-floor":
    try SingleFloor.run(commits: count)
case "rebuild":
    // Rebuilds every projection of the store at $BENCH_STORE (default: a fresh ingest of `count`).
    let store = ProcessInfo.processInfo.environment["BENCH_STORE"].map { try! Ledger(path: $0) } ?? {
        try! EngineSetup.mustSucceed(l, (0..<count).map {
            CommandRequest(.propose(Sample.proposal(Sample.actionId("rb", $0), person: Sample.person(0))), now: Sample.base)
        })
        return l
    }()
    var options = RebuildOptions()
    if let n = ProcessInfo.processInfo.environment["BENCH_BATCH"].flatMap(Int.init) { options.batchSize = n }
    let t = Date()
    _ = try store.rebuild(options: options)
    print(String(format: "rebuild: %.0f events/s", Double(try store.read { try $0.head().seq }) / -t.timeIntervalSinceNow))
case "fixture":
    print(try MillionFixture.path())
case "fixture-passes":
    try FixturePasses.run(rounds: args.count > 2 ? count : 1)
default:
    fatalError("unknown workload \(workload)")
}
print("\(workload) \(count): \(String(format: "%.3f", -started.timeIntervalSinceNow)) s")

/// The environment's last committed transaction id, as `mdb_stat -e` reads it.
func lastTxnId(_ path: String) throws -> Int {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/mdb_stat")
    p.arguments = ["-n", "-e", path]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    let line = text.split(separator: "\n").first { $0.contains("Last transaction ID") }!
    return Int(line.split(separator: " ").last!)!
}

/// Bytes this process has passed to write calls (`wchar` in /proc/self/io): LMDB writes
/// each commit's dirty pages and its meta page with pwrite/writev, and nothing else writes.
func writtenBytes() -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/io", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix("wchar:") }
    return line.flatMap { Int($0.split(separator: " ").last!) } ?? 0
}

/// Proposes `count` actions, 1000 per group; returns the seconds spent in the engine (the
/// requests are built before the clock starts, as in `make bench`'s ingest).
func ingest(_ l: Ledger, _ count: Int) throws -> Double {
    var i = 0, inEngine = 0.0
    while i < count {
        let n = min(1000, count - i)
        let requests = (i..<i + n).map {
            CommandRequest(.propose(Sample.proposal(Sample.actionId("in", $0), person: Sample.person(0))), now: Sample.base)
        }
        let t = Date()
        try EngineSetup.mustSucceed(l, requests)
        inEngine -= t.timeIntervalSinceNow
        i += n
    }
    return inEngine
}
