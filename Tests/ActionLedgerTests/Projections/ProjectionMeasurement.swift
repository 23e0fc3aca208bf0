import Foundation
import Testing
@testable import ActionLedger

/// Not a unit test: measures the rebuild rate and query latencies on ~1M events when
/// `LEDGER_MEASURE_DIR` is set (run it in release; see Specs/queries.md). It asserts
/// nothing about speed; it prints the figures.
@Suite struct ProjectionMeasurement {
    static let directory = ProcessInfo.processInfo.environment["LEDGER_MEASURE_DIR"]
    static let persons = 200

    @Test(.enabled(if: directory != nil)) func millionEvents() throws {
        let path = Self.directory! + "/projections-1m.lmdb"
        let actions = try Self.fixture(path)
        let l = try Ledger(path: path)
        let head = try l.read { try $0.head().seq }
        let end = Timestamp(milliseconds: t0.milliseconds + Int64(actions) * 12_000)

        let started = ContinuousClock.now
        let results = try l.rebuild()
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print("rebuild of \(results.count) projections over \(head) events: \(String(format: "%.1f", seconds)) s, "
            + "\(Int(Double(head) / seconds)) events/s")

        func measure(_ name: String, _ runs: Int, _ body: (Int) throws -> Void) rethrows {
            var samples: [Double] = []
            for i in 0..<runs {
                let s = ContinuousClock.now
                try body(i)
                samples.append((ContinuousClock.now - s) / .microseconds(1))
            }
            samples.sort()
            print("\(name): median \(Int(samples[runs / 2])) µs, p99 \(Int(samples[runs * 99 / 100])) µs over \(runs) runs")
        }
        var sink = 0
        // Pending actions (i % 10 == 9) all belong to the 20 persons whose number ends in 9.
        try measure("today first page (20 of ~\(actions / 10 / 20) pending)", 400) { i in
            sink += try l.query { try $0.today(TodayQuery(person: "person-\((i % 20) * 10 + 9)", now: end)) }.items.count
        }
        try measure("today, person with nothing pending", 400) { i in
            sink += try l.query { try $0.today(TodayQuery(person: "person-\((i % 20) * 10)", now: end)) }.items.count
        }
        try measure("audit action (whole trail)", 1000) { i in
            sink += try l.query { try $0.auditAction("act-\((i * 7919) % actions)", now: end) }.trail.count
        }
        try measure("auto-shipped 24h (all persons)", 200) { _ in
            sink += try l.query { try $0.autoShipped(in: .last(Timestamp.day, before: end)) }.count
        }
        try measure("audit actor, 100 entries", 400) { i in
            sink += try l.query { try $0.audit(.actor("person-\(i % Self.persons)"), limit: 100) }.entries.count
        }
        print("(checksum \(sink))")
    }

    /// What the inline projections cost an append: the same 200k-event mix with the
    /// standard projections and with none (group commit, no fsync, so the fold shows).
    @Test(.enabled(if: directory != nil)) func inlineAppendOverhead() throws {
        for (name, registry) in [("none", ProjectionRegistry([])), ("standard", ProjectionRegistry.standard)] {
            let path = Self.directory! + "/append-\(name)-\(UUID().uuidString).lmdb"
            defer { for p in [path, path + "-lock"] { try? FileManager.default.removeItem(atPath: p) } }
            var options = Ledger.Options()
            options.environment.unsafeNoSync = true
            options.environment.mapSize = 1 << 30
            options.projections = registry
            let l = try Ledger(path: path, options: options)
            _ = try l.execute(group: (0..<Self.persons).map { p in
                CommandRequest(.linkDevice(device: "device-\(p)", person: "person-\(p)", org: "org", label: "phone \(p)",
                                           platform: .ios), now: t0)
            })
            let started = ContinuousClock.now
            var i = 0
            while try l.read({ try $0.head().seq }) < 200_000 {
                var group: [CommandRequest] = []
                while group.count < 3000 {
                    group += Self.commands(i)
                    i += 1
                }
                for r in try l.execute(group: group) { _ = try r.get() }
            }
            let head = try l.read { try $0.head().seq }
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            print("append with \(name) projections: \(Int(Double(head) / seconds)) events/s over \(head) events")
        }
    }

    /// ~1M events, the benchmarks' mix: for action i (200 persons, 12 s apart) i%10 in
    /// 0…3 medium reviewed then approved; 4…5 low and confident, auto-shipped; 6…7 low,
    /// approved; 8 dismissed; 9 left pending. Built with `unsafeNoSync` (set-up only).
    static func fixture(_ path: String) throws -> Int {
        let marker = path + ".done"
        if let text = try? String(contentsOfFile: marker, encoding: .utf8), let n = Int(text) { return n }
        var options = Ledger.Options()
        options.environment.unsafeNoSync = true
        options.environment.mapSize = 8 << 30
        let l = try Ledger(path: path, options: options)
        _ = try l.execute(group: (0..<persons).map { p in
            CommandRequest(.linkDevice(device: "device-\(p)", person: "person-\(p)", org: "org", label: "phone \(p)",
                                       platform: .ios), now: t0)
        })
        let started = ContinuousClock.now
        var i = 0
        while try l.read({ try $0.head().seq }) < 1_000_000 {
            var group: [CommandRequest] = []
            while group.count < 3000 {
                group += commands(i)
                i += 1
            }
            for r in try l.execute(group: group) { _ = try r.get() }
        }
        let head = try l.read { try $0.head().seq }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print("fixture: \(head) events, \(i) actions, appended with inline projections at "
            + "\(Int(Double(head) / seconds)) events/s (no fsync)")
        try l.environment.sync()
        try "\(i)".write(toFile: marker, atomically: true, encoding: .utf8)
        return i
    }

    static func commands(_ i: Int) -> [CommandRequest] {
        let id = "act-\(i)", person = "person-\(i % persons)", device = "device-\(i % persons)"
        let now = Timestamp(milliseconds: t0.milliseconds + Int64(i) * 12_000)
        let k = i % 10
        let input = proposal(id, person: person, stakes: k <= 3 ? .medium : .low, confidence: k == 4 || k == 5 ? 0.95 : 0.5,
                             kind: i % 3 == 0 ? "send_reply" : "publish_post")
        var out = [CommandRequest(.propose(input), now: now)]
        switch k {
        case 0...3:
            out.append(CommandRequest(.tap(.review, actionId: id, device: device), now: now))
            out.append(CommandRequest(.tap(.approve, actionId: id, device: device), now: now))
        case 6, 7: out.append(CommandRequest(.tap(.approve, actionId: id, device: device), now: now))
        case 8: out.append(CommandRequest(.dismiss(actionId: id, device: device, reason: "not today"), now: now))
        default: break
        }
        return out
    }
}
