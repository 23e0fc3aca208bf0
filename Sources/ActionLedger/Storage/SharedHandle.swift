import CLMDB
import Foundation

/// The one LMDB environment this process holds on a store, shared by every ``Environment``
/// opened on it.
///
/// LMDB's locks are POSIX record locks on the lock file, and a process never conflicts with
/// its own: a second `mdb_env_open` of the file in this process would take the lock file as
/// if no one had it and set its lock table up afresh (reader slots and writer mutex
/// included, under the first environment's transactions), and closing either environment
/// would drop every lock this process holds there — the other's too, so another process
/// would take this one's readers for dead. So a store is opened once per process, and closed
/// when its last ``Environment`` goes. A later open takes the environment as it is: its
/// options' map size (the map grows by itself), database and reader counts are the first's.
final class SharedHandle: @unchecked Sendable {
    // Safe to share: `env` and the locks are themselves thread-safe (MDB_NOTLS), the flags
    // never change, and `users` is only touched under ``LockFiles``'s lock.
    let env: OpaquePointer
    /// Opened `MDB_RDONLY`: no writable ``Environment`` can use it.
    let readOnly: Bool
    let noSync: Bool
    /// LMDB's page size for the file, read at the open.
    let pageSize: Int
    /// Guards "no transaction is open in this process" for every user of the environment.
    let resizeLock = ResizeLock()
    let handles = HandleCache()
    fileprivate var users = 1

    init(env: OpaquePointer, readOnly: Bool, noSync: Bool, pageSize: Int) {
        self.env = env
        self.readOnly = readOnly
        self.noSync = noSync
        self.pageSize = pageSize
    }

    /// Why an open with `options` cannot use this environment, if it cannot.
    func refusal(_ options: Environment.Options, path: String) -> LedgerError? {
        if readOnly && !options.readOnly {
            return LedgerError(.busy, "\(path) is open read-only in this process; open it writable once that handle is closed",
                               details: ["field": "db"])
        }
        if noSync != options.unsafeNoSync {
            return LedgerError(.invalidInput, "\(path) is open in this process \(noSync ? "without" : "with") fsync; "
                + "every handle on one store in a process shares its durability", details: ["field": "db"])
        }
        return nil
    }
}

/// The stores this process has open, by their lock file's identity (``SharedHandle``).
/// Changed under ``Environment/opening`` (opens and closes run one at a time) and its own lock
/// (``isOpen(_:)`` is asked from anywhere).
enum LockFiles {
    // Safe to share: the table is only touched under `lock`.
    nonisolated(unsafe) private static var open: [FileIdentity: SharedHandle] = [:]
    private static let lock = NSLock()

    static func isOpen(_ id: FileIdentity) -> Bool { lock.withLock { open[id] != nil } }

    /// The environment open on lock file `id`, if any.
    static func handle(_ id: FileIdentity) -> SharedHandle? { lock.withLock { open[id] } }

    /// One more user of `handle`, found open.
    static func use(_ handle: SharedHandle) {
        lock.withLock { handle.users += 1 }
    }

    /// Registers `handle`, just opened on lock file `id`.
    /// - throws: `invalid_input` when another environment of this process holds that lock
    ///   file (it was renamed in under the path while this open ran): the caller closes its own.
    static func register(_ handle: SharedHandle, _ id: FileIdentity, path: String) throws {
        try lock.withLock {
            guard open[id] == nil else {
                throw LedgerError(.invalidInput, "\(path)-lock changed while \(path) was opened, to a lock file this process "
                    + "holds for another open: open it again", details: ["field": "db"])
            }
            open[id] = handle
        }
    }

    /// One user fewer; true when it was the last, and the environment must now be closed.
    static func release(_ id: FileIdentity) -> Bool {
        lock.withLock {
            guard let h = open[id] else { return true }
            h.users -= 1
            guard h.users == 0 else { return false }
            open[id] = nil
            return true
        }
    }
}
