import Foundation

/// The environment's open database handles by name. A handle is published only after the
/// transaction that opened it committed, because LMDB closes handles opened in a
/// transaction that aborts; once published it stays valid for the environment's life.
final class HandleCache: @unchecked Sendable {
    // Safe: `handles` is only read and written with `lock` held.
    private let lock = NSLock()
    private var handles: [String: Database] = [:]
    /// Held around every `mdb_dbi_open` (Transaction.openDatabase): LMDB allows no two at once
    /// in one process.
    let openingLock = NSLock()

    subscript(name: String) -> Database? {
        lock.lock()
        defer { lock.unlock() }
        return handles[name]
    }

    func publish(_ opened: [Database]) {
        lock.lock()
        defer { lock.unlock() }
        for db in opened { handles[db.name] = db }
    }

    func evict(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        handles[name] = nil
    }
}
