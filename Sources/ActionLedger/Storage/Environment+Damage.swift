import CLMDB

extension Environment {
    /// The damage behind `error` (`MDB_BAD_TXN`), when the catalogue of databases has some:
    /// LMDB marks a transaction failed when a lookup of a named database meets a damaged
    /// page of the catalogue, drops that lookup's `MDB_CORRUPTED`, and answers every later
    /// call `MDB_BAD_TXN` — which also follows ordinary failures, so the catalogue is walked
    /// in a snapshot of its own to tell them apart. Called with the resize lock held.
    func damageBehind(_ error: LMDBError) -> LMDBError {
        var txn: OpaquePointer?, cursor: OpaquePointer?, dbi: MDB_dbi = 0
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == MDB_SUCCESS else { return error }
        defer { mdb_txn_abort(txn) }
        guard mdb_dbi_open(txn, nil, 0, &dbi) == MDB_SUCCESS, mdb_cursor_open(txn, dbi, &cursor) == MDB_SUCCESS else { return error }
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val(), value = MDB_val(), op = MDB_FIRST
        while true {
            let rc = mdb_cursor_get(cursor, &key, &value, op)
            if rc == MDB_NOTFOUND { return error }
            guard rc == MDB_SUCCESS else {
                let found = LMDBError(code: rc, operation: error.operation + ", then reading the catalogue of databases")
                return found.isDamage ? found : error
            }
            op = MDB_NEXT
        }
    }
}
