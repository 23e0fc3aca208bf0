import BenchLMDB
import Crypto
import Foundation

/// The floor of any design that meets issue 12's requirements for a proposal, through
/// liblmdb's C API with no engine code: per proposal, its preview's content hash (what a
/// tap's statement binds), a lookup of its action id (a duplicate proposal) and of its
/// command id (a replay), then its log value with the chain's SHA-256 over the previous
/// hash and the value (`MDB_APPEND`), its action's stream entry, its command entry, and
/// one Today feed entry — the least that answers an action's stream, an idempotent replay
/// and the feed. Keys and values have the sizes the engine's have (`bench-profile floor`
/// prints them); the log value is the raw baseline's, so this floor is if anything
/// optimistic. Commits are durable.
public final class CheapestShapeLog: @unchecked Sendable {
    // Safe to share between threads: the environment is opened MDB_NOTLS, LMDB serialises
    // write transactions with its writer mutex, and `seq` and `chain` are only touched
    // inside one.
    private let env: OpaquePointer
    private var log: MDB_dbi = 0
    private var index: MDB_dbi = 0
    private var today: MDB_dbi = 0
    private var seq: UInt64 = 0
    private var chain = [UInt8](repeating: 0, count: 32)

    /// Opens (creating) an environment at `path` (a file, `MDB_NOSUBDIR`).
    public init(path: String, mapSize: Int = 16 << 30) throws {
        let (env, dbis) = try openBaseline(path, mapSize: mapSize, databases: ["log", "index", "today"])
        self.env = env
        (log, index, today) = (dbis[0], dbis[1], dbis[2])
    }

    deinit { mdb_env_close(env) }

    /// Proposes `actionIds` (each with the command id at the same place) in one durable
    /// transaction; `value` is each log value (its first 32 bytes take the chain's hash),
    /// `preview` the text whose content hash each proposal computes.
    public func propose(_ actionIds: [String], commandIds: [String], value: [UInt8], preview: [UInt8]) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        do {
            // Buffers reused from one proposal to the next: a floor allocates nothing per entry.
            var stored = value, seqBytes = [UInt8](repeating: 0, count: 8)
            var actionKey: [UInt8] = [], commandKey: [UInt8] = []
            actionKey.reserveCapacity(64)
            commandKey.reserveCapacity(64)
            var feedKey = [UInt8](repeating: 0x20, count: 31), feedValue = [UInt8](repeating: 0, count: 33)
            let commandValue = [UInt8](repeating: 0, count: 12)
            for (action, command) in zip(actionIds, commandIds) {
                seq += 1
                withUnsafeBytes(of: seq.bigEndian) { b in for i in 0..<8 { seqBytes[i] = b[i] } }
                // The event carries its content hash (bytes 32..<64 here).
                let content = preview.withUnsafeBytes { SHA256.hash(data: $0) }
                content.withUnsafeBytes { b in for i in 0..<32 { stored[32 + i] = b[i] } }
                actionKey.removeAll(keepingCapacity: true)
                actionKey.append(2)
                actionKey.append(contentsOf: action.utf8)
                actionKey.append(0)                                          // the stream's prefix: is the id taken?
                commandKey.removeAll(keepingCapacity: true)
                commandKey.append(5)
                commandKey.append(contentsOf: command.utf8)                  // 37 bytes in the engine
                guard try !exists(txn, actionKey), try !exists(txn, commandKey) else {
                    throw BaselineError(description: "duplicate \(action)")
                }
                actionKey.append(contentsOf: seqBytes)                       // 21 bytes in the engine
                chainStoredValue(&chain, &stored)
                for i in 0..<8 {
                    feedKey[2 + i] = seqBytes[i]
                    feedValue[i] = seqBytes[i]
                }
                try put(txn, log, seqBytes, stored, UInt32(MDB_APPEND))
                try put(txn, index, actionKey, [], 0)
                try put(txn, index, commandKey, commandValue, 0)              // 12 bytes: seq, count
                try put(txn, today, feedKey, feedValue, 0)                     // 31 and 33 bytes
            }
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    private func exists(_ txn: OpaquePointer?, _ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { kb in
            var kv = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
            var v = MDB_val()
            let rc = mdb_get(txn, index, &kv, &v)
            guard rc == 0 || rc == MDB_NOTFOUND else { throw BaselineError(description: "mdb_get: \(String(cString: mdb_strerror(rc)))") }
            return rc == 0
        }
    }

    private func put(_ txn: OpaquePointer?, _ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8], _ flags: UInt32) throws {
        try key.withUnsafeBytes { kb in
            try value.withUnsafeBytes { vb in
                var kv = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
                var vv = MDB_val(mv_size: vb.count, mv_data: UnsafeMutableRawPointer(mutating: vb.baseAddress))
                try check(mdb_put(txn, dbi, &kv, &vv, flags), "mdb_put")
            }
        }
    }
}

/// The chain: SHA-256 of the previous hash (`chain`) and the event (`stored` past its
/// 32-byte head), written into both the chain and the stored value's head, allocation-free.
public func chainStoredValue(_ chain: inout [UInt8], _ stored: inout [UInt8]) {
    var hasher = SHA256()
    hasher.update(data: chain)
    stored.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[32...])) }
    hasher.finalize().withUnsafeBytes { b in
        for i in 0..<32 {
            chain[i] = b[i]
            stored[i] = b[i]
        }
    }
}
