/// The log's own databases: the events, and the indexes written in the same transaction.
///
/// The indexes are key ranges of **one** LMDB database, `log_index` (a range byte, then the
/// key): a durable commit writes every B-tree it touched, with its branch pages and
/// catalogue record, so an approval that appends an event and updates three indexes writes
/// two trees, not four. The ranges are ordered so that what every
/// commit writes at the right edge — the newest command ids (time-ordered) and the head
/// record — shares the tree's last leaf. Stores written before the log index kept each
/// index in a database of its own; they are read as they are and converted on a writable
/// open (``LogDatabases/migrateLegacyLayout(_:)``).
struct LogDatabases: Sendable {
    /// seq (8 bytes BE) → chain hash (32 bytes) ‖ canonical event bytes. Append-only.
    let events: Database
    /// `policy` → seq of the policy in force; `projection/NAME` → a projection's bookkeeping.
    let meta: LogIndex
    /// action id ‖ 0x00 ‖ seq → empty: each action's stream.
    let actionSeqs: LogIndex
    /// device id ‖ 0x00 ‖ seq → empty: each device's link and revocation events.
    let deviceSeqs: LogIndex
    /// person ‖ 0x00 ‖ UTC day (8 BE) → count (8 BE): auto-ships per person and day.
    let autoShipDays: LogIndex
    /// command id → first seq (8 BE) ‖ event count (4 BE): idempotency of commands.
    let commands: LogIndex
    /// `head` → the last seq ‖ its hash: the tree's last key.
    let head: LogIndex

    /// The ranges in range-byte order (1…6); before the log index, each but `head` was a
    /// database of this name (the head record was `head` in `meta`).
    static let indexNames = ["meta", "action_seqs", "device_seqs", "autoship_days", "commands", "head"]
    static let indexDatabase = "log_index"

    /// Opens (creating in a write transaction) the log's databases; nil in a read-only
    /// transaction on an environment where the log was never created.
    static func open(_ txn: Transaction) throws -> LogDatabases? {
        if let index = try txn.openDatabase(indexDatabase, create: false) {
            guard let events = try txn.openDatabase("events", create: !txn.isReadOnly) else { return nil }
            return LogDatabases(events: events) { LogIndex(database: index, tag: UInt8($0 + 1), name: indexNames[$0]) }
        }
        if let legacy = try openLegacy(txn) { return legacy }
        guard !txn.isReadOnly, let events = try txn.openDatabase("events", create: true),
              let index = try txn.openDatabase(indexDatabase, create: true) else { return nil }
        return LogDatabases(events: events) { LogIndex(database: index, tag: UInt8($0 + 1), name: indexNames[$0]) }
    }

    /// Whether these are a legacy store's databases (to be converted on a writable open).
    var isLegacyLayout: Bool { head.tag == nil }

    private init(events: Database, index: (Int) throws -> LogIndex) rethrows {
        self.events = events
        meta = try index(0)
        actionSeqs = try index(1)
        deviceSeqs = try index(2)
        autoShipDays = try index(3)
        commands = try index(4)
        head = try index(5)
    }

    /// A store written before the log index: every index a database of its own.
    private static func openLegacy(_ txn: Transaction) throws -> LogDatabases? {
        guard let events = try txn.openDatabase("events", create: false),
              try txn.openDatabase("meta", create: false) != nil else { return nil }
        return try LogDatabases(events: events) { i in
            let name = i == 5 ? "meta" : indexNames[i]
            guard let db = try txn.openDatabase(name, create: !txn.isReadOnly) else {
                throw LedgerError(.storage, "the store has no \(name) database")
            }
            return LogIndex(database: db, tag: nil, name: indexNames[i])
        }
    }

    /// Copies a legacy store's indexes into `log_index` (range by range, in key order, so
    /// each entry is appended at the tree's right edge) and deletes the old databases, in
    /// one write transaction: all or nothing. The events are not touched.
    static func migrateLegacyLayout(_ txn: Transaction) throws {
        guard try txn.openDatabase(indexDatabase, create: false) == nil,
              let legacy = try openLegacy(txn), let index = try txn.openDatabase(indexDatabase, create: true) else { return }
        let current = LogDatabases(events: legacy.events) { LogIndex(database: index, tag: UInt8($0 + 1), name: indexNames[$0]) }
        let ranges = [(legacy.meta, current.meta), (legacy.actionSeqs, current.actionSeqs),
                      (legacy.deviceSeqs, current.deviceSeqs), (legacy.autoShipDays, current.autoShipDays),
                      (legacy.commands, current.commands)]
        for (old, new) in ranges {
            try txn.scan(old.database) { k, v in
                // The head record has a range of its own, last.
                if new.tag == current.meta.tag, k.elementsEqual(MetaKey.head) { return true }
                try new.put(txn, key: k, value: v, flags: .append)
                return true
            }
        }
        if let head = try legacy.head.get(txn, key: MetaKey.head) {
            try current.head.put(txn, key: MetaKey.head, value: head, flags: .append)
        }
        for (old, _) in ranges { try txn.drop(old.database, delete: true) }
    }
}

/// One of the log's indexes: a key range of the `log_index` database, or (in a store
/// written before it) a whole database. Keys are given without the range byte.
struct LogIndex: Sendable {
    let database: Database
    /// The range byte; nil for a legacy store's own database.
    let tag: UInt8?
    /// The index's name (``LogDatabases/indexNames``), for errors that name an entry.
    let name: String

    init(database: Database, tag: UInt8?, name: String? = nil) {
        self.database = database
        self.tag = tag
        self.name = name ?? tag.flatMap { LogDatabases.indexNames.indices.contains(Int($0) - 1)
            ? LogDatabases.indexNames[Int($0) - 1] : nil } ?? "log_index"
    }

    /// Lends the stored key (this runs for every index read and write).
    @inline(__always)
    func withKey<R>(_ key: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let tag else { return try withBytes(key, body) }
        return try withTaggedKey(tag, key, body)
    }

    func withValue<R>(_ txn: Transaction, key: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withKey(key) { k in try txn.withValue(database, key: k, body) }
    }

    func get(_ txn: Transaction, key: some Collection<UInt8>) throws -> [UInt8]? {
        try withValue(txn, key: key) { Array($0) }
    }

    func put(_ txn: Transaction, key: some Collection<UInt8>, value: some Collection<UInt8>, flags: PutFlags = []) throws {
        try withKey(key) { k in try withBytes(value) { v in try txn.put(database, key: k, value: v, flags: flags) } }
    }

    /// Removes `key` (projection bookkeeping only: nothing of the log is ever deleted).
    @discardableResult
    func delete(_ txn: Transaction, key: some Collection<UInt8>) throws -> Bool {
        try withKey(key) { k in try txn.delete(database, key: k) }
    }

    /// Visits the index's entries in key order from `start` (inclusive); `body` returns false to stop.
    func scan(_ txn: Transaction, from start: [UInt8] = [],
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let tag else { return try txn.scan(database, from: start.isEmpty ? nil : start, body) }
        try txn.scan(database, from: [tag] + start) { k, v in
            guard k.first == tag else { return false }
            return try body(UnsafeRawBufferPointer(rebasing: k.dropFirst()), v)
        }
    }
}

/// Key helpers shared by the log and the projections.
public enum Keys {
    /// 8-byte big-endian: sorts numerically in LMDB's byte order.
    @inline(__always)
    public static func u64(_ v: UInt64) -> [UInt8] {
        withUnsafeBytes(of: v.bigEndian) { Array($0) }
    }

    /// The 8-byte big-endian number at `offset` (as ``u64(_:)`` wrote it).
    @inline(__always)
    public static func readU64(_ b: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
        UInt64(bigEndian: b.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// `prefix ‖ 0x00 ‖ u64`: ids never contain 0x00 (they are validated), so the
    /// separator keeps one id's entries together and ordered by the number.
    public static func composite(_ prefix: String, _ n: UInt64) -> [UInt8] {
        var k = Self.prefix(prefix)
        k.append(contentsOf: u64(n))
        return k
    }

    /// `id ‖ 0x00`: the prefix every key of one id starts with, in the log's indexes and
    /// the projections alike.
    public static func prefix(_ id: String) -> [UInt8] {
        var k = [UInt8]()
        k.reserveCapacity(id.utf8.count + 9)
        k.append(contentsOf: id.utf8)
        k.append(0)
        return k
    }
}
