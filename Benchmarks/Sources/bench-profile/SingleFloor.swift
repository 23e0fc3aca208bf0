import ActionLedger
import Baselines
import BenchLMDB
import BenchSupport
import Foundation

/// `bench-profile single-floor <commits>`: the floor of any design for issue 12's "single
/// approval p50 ≤ 1.3× a raw commit", on this machine, beside make bench's two sides.
///
/// No engine code runs in the floor. The least one approval must commit, durably: its log
/// value with the chain's SHA-256 (appended), its entry in its action's stream (every
/// later tap's read and the duplicate check) and its command id (idempotent replay), the
/// two index entries in one tree as the engine keeps them; before that, the reads its
/// judgement cannot skip (the action's stream, the command id). Today and the audit are
/// derived later, off the commit path, as the engine does. Three sides, each `commits`
/// single durable commits per round, five rounds one after another (fsync's cost moves
/// from one second to the next): the raw baseline (a log put and an index put, as make
/// bench's), that floor, and the engine approving pending actions (1 500 proposed first,
/// as make bench's). Medians of each round's p50.
enum SingleFloor {
    static func run(commits: Int) throws {
        let raw = try RawLMDBLog(path: Scratch.fresh("single-floor-raw"))
        let floor = try Cheapest(path: Scratch.fresh("single-floor-shape"), pending: 1_500)
        let engine = try EngineSetup.ledger(at: Scratch.fresh("single-floor-engine"))
        try EngineSetup.proposePending(engine, prefix: "p", count: commits * 5 + 10)
        var next = 0
        var p50s: [String: [Double]] = ["raw": [], "floor": [], "engine": []]
        for round in 0..<5 {
            var times: [String: [Double]] = ["raw": [], "floor": [], "engine": []]
            for i in 0..<commits {
                let sides: [(String, () throws -> Void)] = [
                    ("raw", { try raw.append(count: 1, value: Sample.storedValue) }),
                    ("floor", { try floor.approve(i % 1_500) }),
                    ("engine", {
                        let request = CommandRequest(.tap(.approve, actionId: Sample.actionId("p", next), device: Sample.device(0)),
                                                     now: Sample.base)
                        next += 1
                        let appended = try engine.execute(request).events.count
                        precondition(appended == 1, "approval appended nothing")
                    }),
                ]
                for k in 0..<3 {
                    let (name, body) = sides[(i + round + k) % 3]
                    let t = DispatchTime.now().uptimeNanoseconds
                    try body()
                    times[name]!.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1000)
                }
            }
            for (name, list) in times { p50s[name]!.append(list.sorted()[list.count / 2]) }
            print(String(format: "round %d: raw %.0f µs, floor %.0f µs (%.2f×), engine %.0f µs (%.2f×)", round,
                         p50s["raw"]!.last!, p50s["floor"]!.last!, p50s["floor"]!.last! / p50s["raw"]!.last!,
                         p50s["engine"]!.last!, p50s["engine"]!.last! / p50s["raw"]!.last!))
        }
        func median(_ n: String) -> Double { p50s[n]!.sorted()[2] }
        print(String(format: "medians of p50: raw commit %.0f µs; the cheapest approval %.0f µs = %.2f× raw; engine %.0f µs = %.2f× raw, %.2f× the floor",
                     median("raw"), median("floor"), median("floor") / median("raw"), median("engine"),
                     median("engine") / median("raw"), median("engine") / median("floor")))
    }

    /// Raw LMDB holding what the cheapest design holds: a log and one index tree.
    final class Cheapest {
        let env: OpaquePointer
        var log: MDB_dbi = 0, index: MDB_dbi = 0
        var seq: UInt64 = 0
        var chain = [UInt8](repeating: 0, count: 32)
        var stored = Sample.storedValue

        init(path: String, pending: Int) throws {
            env = try Floor.open(path, readOnly: false)
            var txn: OpaquePointer?
            try Floor.ok(mdb_txn_begin(env, nil, 0, &txn))
            try Floor.ok(mdb_dbi_open(txn, "events", UInt32(MDB_CREATE), &log))
            try Floor.ok(mdb_dbi_open(txn, "log_index", UInt32(MDB_CREATE), &index))
            // The pending actions' proposals: each one's stream entry and command id.
            for i in 0..<pending { try append(txn, action: Self.action(i), command: Self.command()) }
            try Floor.ok(mdb_txn_commit(txn))
        }

        static func action(_ i: Int) -> [UInt8] { Array("p-\(100_000 + i)".utf8) }
        static func command() -> [UInt8] { Array("cmd-\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())".utf8) }

        /// One approval of pending action `i`, in its own durable transaction.
        func approve(_ i: Int) throws {
            var txn: OpaquePointer?
            try Floor.ok(mdb_txn_begin(env, nil, 0, &txn))
            do {
                // The judgement's reads: the action's stream (its last seq) and the command id.
                let prefix = [UInt8(1)] + Self.action(i) + [0]
                try Floor.ok(lastUnder(txn, prefix) ? 0 : MDB_NOTFOUND)
                let command = [UInt8(2)] + Self.command()
                guard try !exists(txn, command) else { throw Floor.FloorError(rc: MDB_KEYEXIST) }
                try append(txn, action: Self.action(i), command: Array(command.dropFirst()))
            } catch {
                mdb_txn_abort(txn)
                throw error
            }
            try Floor.ok(mdb_txn_commit(txn))
        }

        /// The chained log value, the stream entry (1 ‖ action ‖ 0 ‖ seq) and the command
        /// id (2 ‖ id → seq), as the engine's `log_index` ranges hold them.
        private func append(_ txn: OpaquePointer?, action: [UInt8], command: [UInt8]) throws {
            seq += 1
            let seqBytes = withUnsafeBytes(of: seq.bigEndian) { Array($0) }
            chainStoredValue(&chain, &stored)
            try Floor.put(txn, log, seqBytes, stored, UInt32(MDB_APPEND))
            try Floor.put(txn, index, [1] + action + [0] + seqBytes, [], 0)
            try Floor.put(txn, index, [2] + command, seqBytes, 0)
        }

        private func exists(_ txn: OpaquePointer?, _ key: [UInt8]) throws -> Bool {
            try key.withUnsafeBytes { kb in
                var k = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
                var v = MDB_val()
                let rc = mdb_get(txn, index, &k, &v)
                guard rc == 0 || rc == MDB_NOTFOUND else { throw Floor.FloorError(rc: rc) }
                return rc == 0
            }
        }

        /// Whether a key starting with `prefix` exists (the stream's entries), by a cursor seek.
        private func lastUnder(_ txn: OpaquePointer?, _ prefix: [UInt8]) throws -> Bool {
            var cursor: OpaquePointer?
            try Floor.ok(mdb_cursor_open(txn, index, &cursor))
            defer { mdb_cursor_close(cursor) }
            return try prefix.withUnsafeBytes { pb in
                var k = MDB_val(mv_size: pb.count, mv_data: UnsafeMutableRawPointer(mutating: pb.baseAddress))
                var v = MDB_val()
                let rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
                guard rc == 0 else { return false }
                return k.mv_size >= pb.count && memcmp(k.mv_data, pb.baseAddress!, pb.count) == 0
            }
        }
    }
}
