/// The log's own databases: the events and the indexes written in the same transaction.
struct LogDatabases: Sendable {
    /// seq (8 bytes BE) → chain hash (32 bytes) ‖ canonical event bytes. Append-only.
    let events: Database
    /// `head` → seq ‖ hash; `policy` → seq of the policy in force.
    let meta: Database
    /// command id → first seq (8 BE) ‖ event count (4 BE): idempotency of commands.
    let commands: Database
    /// action id ‖ 0x00 ‖ seq → empty: each action's stream.
    let actionSeqs: Database
    /// device id ‖ 0x00 ‖ seq → empty: each device's link and revocation events.
    let deviceSeqs: Database
    /// person ‖ 0x00 ‖ UTC day (8 BE) → count (8 BE): auto-ships per person and day.
    let autoShipDays: Database

    static let names = ["events", "meta", "commands", "action_seqs", "device_seqs", "autoship_days"]

    /// Opens (creating in a write transaction) the log's databases; nil in a read-only
    /// transaction on an environment where the log was never created.
    static func open(_ txn: Transaction) throws -> LogDatabases? {
        var dbs: [Database] = []
        for name in names {
            guard let db = try txn.openDatabase(name, create: !txn.isReadOnly) else { return nil }
            dbs.append(db)
        }
        return LogDatabases(events: dbs[0], meta: dbs[1], commands: dbs[2], actionSeqs: dbs[3],
                            deviceSeqs: dbs[4], autoShipDays: dbs[5])
    }
}

/// Key helpers shared by the log and the projections.
public enum Keys {
    /// 8-byte big-endian: sorts numerically in LMDB's byte order.
    @inline(__always)
    public static func u64(_ v: UInt64) -> [UInt8] {
        withUnsafeBytes(of: v.bigEndian) { Array($0) }
    }

    @inline(__always)
    public static func readU64(_ b: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
        UInt64(bigEndian: b.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// `prefix ‖ 0x00 ‖ u64`: ids never contain 0x00 (they are validated), so the
    /// separator keeps one id's entries together and ordered by the number.
    public static func composite(_ prefix: String, _ n: UInt64) -> [UInt8] {
        var k = Array(prefix.utf8)
        k.append(0)
        k.append(contentsOf: u64(n))
        return k
    }

    public static func prefix(_ prefix: String) -> [UInt8] {
        var k = Array(prefix.utf8)
        k.append(0)
        return k
    }
}
