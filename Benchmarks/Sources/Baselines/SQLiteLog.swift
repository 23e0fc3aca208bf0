import CSQLite

/// What a Swift developer would reach for instead: the system's SQLite, WAL with
/// `synchronous=FULL` (every commit fsync'd), an events table with the indexes the
/// engine's queries would need of it: by action (an action's stream), by actor + time,
/// by device + time (taps only: proposals have no device), by person + time and by time
/// (the audit, activity and "last 24 h" listings). Each connection is used by one thread;
/// several connections on one file serialise their writes on SQLite's lock (the busy
/// timeout only as a fallback: the benchmarks serialise writers in the process).
public final class SQLiteLog: @unchecked Sendable {
    // Safe: one connection is only ever used by one thread at a time (the benchmarks give
    // each caller thread its own).
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var next: Int64 = 0
    /// Distinguishes this connection's action ids from another's on the same file.
    private let tag: Int

    public static let schema = [
        "PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
        "CREATE TABLE IF NOT EXISTS log(seq INTEGER PRIMARY KEY, action TEXT NOT NULL, actor TEXT NOT NULL, "
            + "device TEXT, person TEXT NOT NULL, at INTEGER NOT NULL, body BLOB NOT NULL)",
        "CREATE INDEX IF NOT EXISTS log_action ON log(action)",
        "CREATE INDEX IF NOT EXISTS log_actor ON log(actor, at)",
        "CREATE INDEX IF NOT EXISTS log_device ON log(device, at) WHERE device IS NOT NULL",
        "CREATE INDEX IF NOT EXISTS log_person ON log(person, at)",
        "CREATE INDEX IF NOT EXISTS log_at ON log(at)",
    ]

    /// Opens (creating) the database at `path`; `tag` tells connections on one file apart.
    public init(path: String, tag: Int = 0) throws {
        self.tag = tag
        try ok(sqlite3_open(path, &db), "sqlite3_open")
        // Writers on other connections hold the lock for one commit (an fsync or two).
        sqlite3_busy_timeout(db, 60_000)
        for sql in SQLiteLog.schema { try exec(sql) }
        try ok(sqlite3_prepare_v2(db, "INSERT INTO log(action, actor, device, person, at, body) VALUES (?, ?, ?, ?, ?, ?)",
                                  -1, &insert, nil), "prepare")
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_close(db)
    }

    /// Inserts `count` rows whose body is `value`, in one transaction: proposals by a
    /// specialist (no device) or, with `device`, taps by a person's phone.
    public func append(count: Int, value: [UInt8], device: String? = nil) throws {
        try exec("BEGIN IMMEDIATE")
        do {
            try value.withUnsafeBytes { v in
                for _ in 0..<count {
                    next += 1
                    try bindText(1, "a\(tag)-\(next)")
                    try bindText(2, device == nil ? "specialist:Sasha" : "person:creator-1000")
                    if let device { try bindText(3, device) } else { sqlite3_bind_null(insert, 3) }
                    try bindText(4, "creator-1000")
                    sqlite3_bind_int64(insert, 5, 1_788_220_800_000 + next)
                    sqlite3_bind_blob(insert, 6, v.baseAddress, Int32(v.count), SQLITE_TRANSIENT)
                    let rc = sqlite3_step(insert)
                    sqlite3_reset(insert)
                    guard rc == SQLITE_DONE else { throw BaselineError(description: "insert: \(message)") }
                }
            }
            try exec("COMMIT")
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    private func bindText(_ column: Int32, _ text: String) throws {
        try ok(sqlite3_bind_text(insert, column, text, -1, SQLITE_TRANSIENT), "bind")
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
