import BenchLMDB
import Foundation

/// The floor: raw LMDB through its C API, doing per event exactly a log put (seq →
/// value, `MDB_APPEND`) and one index put (id ‖ 0x00 ‖ seq → empty), nothing else —
/// no hashing, no encoding, no projections. Commits are fsync'd like the engine's.
public final class RawLMDBLog: @unchecked Sendable {
    // Safe to share between threads: the environment is opened MDB_NOTLS, LMDB serialises
    // write transactions with its writer mutex, and `seq` is only touched inside one.
    private let env: OpaquePointer
    private var log: MDB_dbi = 0
    private var index: MDB_dbi = 0
    private var seq: UInt64 = 0

    /// Opens (creating) an environment at `path` (a file, `MDB_NOSUBDIR`).
    public init(path: String, mapSize: Int = 16 << 30) throws {
        let (env, dbis) = try openBaseline(path, mapSize: mapSize, databases: ["log", "index"])
        self.env = env
        (log, index) = (dbis[0], dbis[1])
    }

    deinit { mdb_env_close(env) }

    /// Appends `count` entries whose value is `value`, in one durable transaction.
    public func append(count: Int, value: [UInt8]) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        do {
            try value.withUnsafeBytes { v in
                for _ in 0..<count {
                    seq += 1
                    var key = seq.bigEndian
                    try withUnsafeMutableBytes(of: &key) { kb in
                        var k = MDB_val(mv_size: 8, mv_data: kb.baseAddress)
                        var d = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                        try check(mdb_put(txn, log, &k, &d, UInt32(MDB_APPEND)), "mdb_put(log)")
                    }
                    var ik = indexKey(seq)
                    try ik.withUnsafeMutableBytes { ib in
                        var ikv = MDB_val(mv_size: ib.count, mv_data: ib.baseAddress)
                        var empty = MDB_val(mv_size: 0, mv_data: nil)
                        try check(mdb_put(txn, index, &ikv, &empty, 0), "mdb_put(index)")
                    }
                }
            }
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    /// `a<seq> ‖ 0x00 ‖ seq (8 BE)`: the shape of the engine's per-action index key.
    private func indexKey(_ seq: UInt64) -> [UInt8] {
        var k = Array("a\(seq)".utf8)
        k.append(0)
        withUnsafeBytes(of: seq.bigEndian) { k.append(contentsOf: $0) }
        return k
    }
}

/// An LMDB or SQLite call that failed.
public struct BaselineError: Error, CustomStringConvertible {
    public let description: String
}

/// Opens (creating) a durable environment at `path` (a file, `MDB_NOSUBDIR`, `MDB_NOTLS`)
/// and creates `databases` in it; returns the environment and their handles.
func openBaseline(_ path: String, mapSize: Int, databases: [String]) throws -> (OpaquePointer, [MDB_dbi]) {
    var handle: OpaquePointer?
    try check(mdb_env_create(&handle), "mdb_env_create")
    let env = handle!
    try check(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
    try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
    try check(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_NOTLS), 0o644), "mdb_env_open")
    var txn: OpaquePointer?
    try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
    let dbis = try databases.map { name in
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &dbi), "mdb_dbi_open(\(name))")
        return dbi
    }
    try check(mdb_txn_commit(txn), "mdb_txn_commit")
    return (env, dbis)
}

func check(_ rc: Int32, _ what: String) throws {
    guard rc == 0 else { throw BaselineError(description: "\(what): \(String(cString: mdb_strerror(rc)))") }
}
