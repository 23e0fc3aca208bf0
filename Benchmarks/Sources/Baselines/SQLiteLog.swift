import CSQLite

/// What a Swift developer would reach for instead: the system's SQLite, WAL with
/// `synchronous=FULL` (every commit fsync'd), a log table with one index.
public final class SQLiteLog {
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var seq: Int64 = 0

    public init(path: String) throws {
        try ok(sqlite3_open(path, &db), "sqlite3_open")
        for sql in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                    "CREATE TABLE IF NOT EXISTS log(seq INTEGER PRIMARY KEY, action TEXT NOT NULL, body BLOB NOT NULL)",
                    "CREATE INDEX IF NOT EXISTS log_action ON log(action, seq)"] {
            try exec(sql)
        }
        try ok(sqlite3_prepare_v2(db, "INSERT INTO log(seq, action, body) VALUES (?, ?, ?)", -1, &insert, nil), "prepare")
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_close(db)
    }

    /// Inserts `count` rows whose body is `value`, in one transaction.
    public func append(count: Int, value: [UInt8]) throws {
        try exec("BEGIN IMMEDIATE")
        do {
            try value.withUnsafeBytes { v in
                for _ in 0..<count {
                    seq += 1
                    sqlite3_bind_int64(insert, 1, seq)
                    let action = "a\(seq)"
                    try action.withCString { a in
                        sqlite3_bind_text(insert, 2, a, -1, SQLITE_TRANSIENT)
                        sqlite3_bind_blob(insert, 3, v.baseAddress, Int32(v.count), SQLITE_TRANSIENT)
                        let rc = sqlite3_step(insert)
                        sqlite3_reset(insert)
                        guard rc == SQLITE_DONE else { throw BaselineError(description: "insert: \(message)") }
                    }
                }
            }
            try exec("COMMIT")
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    private var message: String { String(cString: sqlite3_errmsg(db)) }

    private func exec(_ sql: String) throws {
        try ok(sqlite3_exec(db, sql, nil, nil, nil), sql)
    }

    private func ok(_ rc: Int32, _ what: String) throws {
        guard rc == SQLITE_OK else {
            throw BaselineError(description: "\(what): \(db.map { String(cString: sqlite3_errmsg($0)) } ?? "code \(rc)")")
        }
    }
}

/// SQLite's "copy the bytes now" destructor, which Swift cannot import as a macro.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
