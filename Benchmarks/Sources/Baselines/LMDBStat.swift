import BenchLMDB

/// Page counts of an LMDB file through LMDB's own `mdb_stat`/`mdb_env_info` (what the
/// `mdb_stat -a -f -e` tool prints): used to compare a store's size with its log's.
public struct LMDBStat: Sendable {
    public var pageSize: Int
    /// Pages in use per named database (branch + leaf + overflow, as `mdb_stat` counts them:
    /// without a DUPSORT database's sub-trees), plus "(main)".
    public var databases: [String: Int]
    /// Pages the file has handed out (last page number + 1): live, free-listed and meta.
    public var filePages: Int
    /// Pages on the free list (reusable, still in the file; the list's own pages not counted).
    public var freePages: Int
    /// The free list's own B-tree pages.
    public var freeListPages: Int

    /// Pages in use by the store's data: the file's pages less the free list (its entries
    /// and its tree) and the two meta pages — what a compacted copy (`mdb_copy -c`) keeps.
    /// Not the sum of `databases`: LMDB's per-database figures leave out the sub-pages and
    /// sub-trees of `MDB_DUPSORT` databases (the projections' postings).
    public var usedPages: Int { filePages - freePages - freeListPages - 2 }

    /// Reads the stats of the file at `path` (`MDB_NOSUBDIR`), opened read-only without
    /// the lock file: call it while no process writes the file.
    public init(path: String) throws {
        var handle: OpaquePointer?
        try check(mdb_env_create(&handle), "mdb_env_create")
        let env = handle!
        defer { mdb_env_close(env) }
        try check(mdb_env_set_maxdbs(env, 256), "mdb_env_set_maxdbs")
        try check(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK), 0o644), "mdb_env_open")
        var info = MDB_envinfo()
        try check(mdb_env_info(env, &info), "mdb_env_info")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        func pages(_ dbi: MDB_dbi) throws -> (Int, Int) {
            var st = MDB_stat()
            try check(mdb_stat(txn, dbi, &st), "mdb_stat")
            return (Int(st.ms_psize), Int(st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages))
        }
        var main: MDB_dbi = 0
        try check(mdb_dbi_open(txn, nil, 0, &main), "mdb_dbi_open(main)")
        let (psize, mainPages) = try pages(main)
        var dbs = ["(main)": mainPages]
        // The main database's keys name the others; a key that is not a database is refused
        // with MDB_INCOMPATIBLE and skipped.
        var names: [String] = []
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, main, &cursor), "mdb_cursor_open")
        var k = MDB_val(), v = MDB_val()
        var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        while rc == 0 {
            names.append(String(decoding: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), as: UTF8.self))
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        mdb_cursor_close(cursor)
        for name in names {
            var dbi: MDB_dbi = 0
            guard mdb_dbi_open(txn, name, 0, &dbi) == 0 else { continue }
            dbs[name] = try pages(dbi).1
        }
        // The free list (database 0): each value is a page-number list led by its length.
        var free = 0
        try check(mdb_cursor_open(txn, 0, &cursor), "mdb_cursor_open(free)")
        rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        while rc == 0 {
            free += v.mv_data.loadUnaligned(as: Int.self)
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        mdb_cursor_close(cursor)
        freeListPages = try pages(0).1
        pageSize = psize
        databases = dbs
        filePages = Int(info.me_last_pgno) + 1
        freePages = free
    }
}
