import CLMDB
import Foundation

/// An LMDB environment: one memory-mapped file (`MDB_NOSUBDIR`) plus its `-lock` file.
///
/// Transactions are closures, as in GRDB: ``write(_:)`` commits when the closure returns
/// and aborts when it throws; ``read(_:)`` ends its snapshot when the closure returns. The
/// ``Transaction`` handle is valid only inside the closure.
///
/// Several processes may open the same file at once; LMDB's lock file serialises writers
/// across them. In one process, every `Environment` on a store shares one LMDB environment
/// (``SharedHandle``). The map grows by itself: a write that hits `MDB_MAP_FULL` is aborted, the
/// map doubles with no transaction open in this process, and the closure runs again — so a
/// write closure must be safe to re-run (it only touches the transaction it is given).
///
/// Durable by default: every commit is fsync'd. ``Options/unsafeNoSync`` is an explicit,
/// documented opt-in for throwaway data (benchmark set-up), never used by the CLI.
public final class Environment: @unchecked Sendable {
    // Safe to share: MDB_env is thread-safe when opened with MDB_NOTLS (each transaction
    // belongs to the thread that uses it, not to a TLS slot), and the only mutable Swift
    // state (the map size) is changed under `resizeLock` held exclusively; the count of
    // write transactions only under `countLock`.

    /// How to open an environment.
    public struct Options: Sendable {
        /// Initial map size in bytes; it grows by doubling on `MDB_MAP_FULL`.
        public var mapSize: Int = 64 << 20
        /// Named databases the environment can hold (projection generations need several).
        public var maxDatabases: UInt32 = 128
        /// Concurrent read transactions across all processes.
        public var maxReaders: UInt32 = 256
        /// Open with `MDB_RDONLY`: no write transaction can start, no file is modified.
        public var readOnly = false
        /// Opt-in `MDB_NOSYNC`: commits are not fsync'd. Loses recent commits on power
        /// failure. Only for disposable data such as benchmark fixtures.
        public var unsafeNoSync = false
        /// Read-only, `MDB_NOLOCK`: no `-lock` file is opened or made beside the file. Only for
        /// a file no process writes (a backup this process has just made, to read it back).
        public var withoutLockFile = false

        public init() {}
    }

    let env: OpaquePointer
    /// The file's path.
    public let path: String
    /// Whether the environment was opened read-only.
    public let isReadOnly: Bool
    /// The environment itself, which every handle on this store in this process shares.
    private let shared: SharedHandle
    /// Held shared by every transaction on the environment, exclusively to grow the map.
    var resizeLock: ResizeLock { shared.resizeLock }
    /// Database handles opened by committed transactions, by name.
    var handles: HandleCache { shared.handles }
    private let countLock = NSLock()
    private var writesBegun = 0
    /// The data file opened (nil read-only: such a handle writes nothing), checked by every
    /// write transaction (Environment+FileIdentity.swift).
    let openedFile: FileIdentity?
    /// The `-lock` file opened beside it: LMDB's writer mutex lives there, and a process that
    /// opens the store after it was deleted makes a new one, whose writers this one no
    /// longer excludes (Environment+FileIdentity.swift).
    let openedLock: FileIdentity?
    /// The lock file this handle holds open, registered in ``LockFiles`` until it closes.
    private let registeredLock: FileIdentity?
    /// The path the caller gave, when it is a symbolic link to ``path``: it must still lead
    /// to the opened file at every write.
    let linkPath: String?
    /// LMDB's page size for this file: where its second meta page starts.
    var pageSize: Int { shared.pageSize }
    /// Says on the data file which lock file this handle uses (nil without one).
    let claim: LockFileClaim?
    /// Opens run one at a time in a process: a lock file's preparation must not open and
    /// close a descriptor of a lock file another thread's open is taking fcntl locks on.
    static let opening = NSLock()

    /// Opens (creating if needed, unless read-only) the environment at `path`.
    ///
    /// Clears stale reader slots left by crashed processes (`mdb_reader_check`).
    /// - throws: ``LMDBError`` when LMDB refuses the file.
    public init(path given: String, options: Options = Options()) throws {
        let path = try Environment.resolve(given)
        let (shared, lock, claim) = try Environment.opening.withLock { () throws -> (SharedHandle, FileIdentity?, LockFileClaim?) in
            var noLock = options.readOnly && options.withoutLockFile
            // Open in this process already: that environment is used (SharedHandle says why).
            if !noLock, let lock = FileIdentity(path: path + "-lock"), let held = LockFiles.handle(lock) {
                if let refusal = held.refusal(options, path: path) { throw refusal }
                // A file moved in over the one held (under the same lock file): a second
                // environment on that lock file is what SharedHandle forbids.
                guard FileIdentity(path: path) == FileIdentity.of(held.env) else {
                    throw LedgerError(.invalidInput, "\(path) is not the file this process holds open under \(path)-lock (it was "
                        + "replaced meanwhile): close this process's handles on the old file, then open it", details: ["field": "db"])
                }
                let claim = try LockFileClaim(held.env, path: path, lock: lock)
                LockFiles.use(held)
                return (held, lock, claim)
            }
            let env: OpaquePointer
            do {
                env = try Environment.openHandle(path, options, noLock: noLock)
            } catch let error as LMDBError where options.readOnly && error.code == EACCES {
                // Auditor mode on files we may not write (a copy on read-only media, another
                // user's store): the lock file cannot be opened, so read without it. Safe only
                // when no process writes the file meanwhile (Specs/integrity.md says so).
                env = try Environment.openHandle(path, options, noLock: true)
                noLock = true
            }
            // Read while no other handle can grow the map: it reads the meta page in the map.
            var stat = MDB_stat()
            let pageSize = mdb_env_stat(env, &stat) == 0 ? Int(stat.ms_psize) : 4096
            let shared = SharedHandle(env: env, readOnly: options.readOnly, noSync: options.unsafeNoSync, pageSize: pageSize)
            guard !noLock else { return (shared, nil, nil) }
            do {
                // LMDB has it open: gone already, another process would make a new one.
                guard let lock = FileIdentity(path: path + "-lock") else {
                    throw LedgerError(.storage, "\(path)-lock was removed as the store was opened: open it again")
                }
                let claim = try LockFileClaim(env, path: path, lock: lock)
                try LockFiles.register(shared, lock, path: path)
                return (shared, lock, claim)
            } catch {
                mdb_env_close(env)
                throw error
            }
        }
        self.shared = shared
        env = shared.env
        self.path = path
        linkPath = path == given ? nil : given
        isReadOnly = options.readOnly
        openedFile = options.readOnly ? nil : FileIdentity.of(env)
        openedLock = options.readOnly ? nil : lock
        registeredLock = lock
        self.claim = claim
        try openExistingDatabases()
    }

    /// Opens every named database the file holds, in one read transaction, before any other
    /// transaction of this handle runs: the handles are published when it commits, so the
    /// transactions that follow (a server's first concurrent requests) find them cached and
    /// call no `mdb_dbi_open` of their own for them.
    private func openExistingDatabases() throws {
        try read { txn in
            var root: MDB_dbi = 0
            try check(mdb_dbi_open(txn.txn, nil, 0, &root), "mdb_dbi_open(main)")
            var names: [String] = []
            try txn.scan(Database(dbi: root, name: "")) { k, _ in
                names.append(String(decoding: k, as: UTF8.self))
                return true
            }
            for name in names where !name.isEmpty {
                do { _ = try txn.openDatabase(name, create: false) } catch let e as LMDBError where e.code == MDB_INCOMPATIBLE {
                    continue  // a plain key in the main database, not a database
                }
            }
        }
    }

    deinit {
        // Under `opening`: an open running meanwhile must not find the store in the table and
        // then have it closed under it, nor open it anew while this close is under way.
        Environment.opening.withLock {
            if registeredLock.map(LockFiles.release) ?? true { mdb_env_close(env) }
        }
    }

    /// Runs `body` in a read-only snapshot transaction.
    ///
    /// - warning: Do not let the ``Transaction`` or any lent buffer escape the closure.
    public func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        // Committing (not aborting) a read transaction keeps database handles opened in
        // it valid for later transactions; it writes nothing.
        try retryingResize { try resizeLock.shared { try run(try begin(parent: nil, flags: UInt32(MDB_RDONLY)), body) } }
    }

    /// Runs `body` in a write transaction and commits (fsync'd) when it returns.
    ///
    /// Never call this across an `await`: LMDB requires a write transaction to begin and
    /// commit on the same thread, which this synchronous closure guarantees. `body` may
    /// run more than once (after the map grew), so it must only act on its transaction.
    /// Nor begin one inside a read of any handle on this store on this thread: the map can
    /// only grow once no transaction of the process is open, so a write that needs it to
    /// grow there fails with `EDEADLK` rather than waiting for ever.
    /// - throws: whatever `body` throws (the transaction is then aborted), or
    ///   ``LMDBError`` from LMDB. A failed commit is never followed by an abort.
    @available(*, noasync, message: "a write transaction must begin and commit on one thread")
    public func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        // A read-only handle may share a writable environment (SharedHandle): refused as
        // LMDB refuses a write transaction on an environment opened read-only.
        if isReadOnly { throw LMDBError(code: EACCES, operation: "mdb_txn_begin") }
        return try retryingResize {
            countLock.withLock { writesBegun += 1 }
            return try resizeLock.shared {
                // Checked once the writer lock is held: a replacement renames only while holding it.
                try run(try begin(parent: nil, flags: 0)) { txn in
                    try requireFileInPlace()
                    try requireLockInStep(txn)
                    return try body(txn)
                }
            }
        }
    }

    /// Top-level write transactions begun through this handle. Each waits for LMDB's
    /// writer lock, so work that needs none (opening an up-to-date store) must not add to it.
    var writeTransactionsBegun: Int { countLock.withLock { writesBegun } }

    /// The id of the environment's last committed write transaction, by any process
    /// (`me_last_txnid`): it moves only when a commit wrote something.
    var lastCommittedTransactionId: Int {
        var info = MDB_envinfo()
        // Under the resize lock: it reads the meta pages, in the map another handle may grow.
        resizeLock.shared { _ = mdb_env_info(env, &info) }
        return info.me_last_txnid
    }

    /// Runs `body` in `txn`: commits when it returns, aborts when it throws. A failed
    /// commit has already freed the transaction, so it is never followed by an abort.
    func run<T>(_ txn: Transaction, _ body: (Transaction) throws -> T) throws -> T {
        let result: T
        do {
            result = try body(txn)
        } catch let error as LMDBError where error.code == MDB_BAD_TXN && txn.parent == nil {
            mdb_txn_abort(txn.txn)
            throw damageBehind(error)
        } catch {
            mdb_txn_abort(txn.txn)
            throw error
        }
        try check(mdb_txn_commit(txn.txn), "mdb_txn_commit")
        txn.didCommit()
        return result
    }

    /// Runs `attempt`; on `MDB_MAP_FULL` doubles the map, on `MDB_MAP_RESIZED` adopts the
    /// size another process set, each with no transaction open here, then tries again.
    private func retryingResize<T>(_ attempt: () throws -> T) throws -> T {
        while true {
            do {
                return try attempt()
            } catch let error as LMDBError where [LMDBError.mapFull, LMDBError.mapResized].contains(error.code)
                        && resizeLock.isHeldByThisThread {
                // A transaction inside one this thread has open on the store: the map can
                // only change once that one ends, which waits on this one. Refused, not hung,
                // and with a code of its own: the enclosing transaction's retry on a full map
                // would run its body again, and with it what that body had already done.
                throw LMDBError(code: EDEADLK, operation: error.operation
                    + " (the map must grow, but this thread has another transaction open on the store)")
            } catch let error as LMDBError where error.code == LMDBError.mapFull {
                try resizeLock.exclusive {
                    var info = MDB_envinfo()
                    try check(mdb_env_info(env, &info), "mdb_env_info")
                    try check(mdb_env_set_mapsize(env, info.me_mapsize * 2), "mdb_env_set_mapsize")
                }
            } catch let error as LMDBError where error.code == LMDBError.mapResized {
                try resizeLock.exclusive {
                    try check(mdb_env_set_mapsize(env, 0), "mdb_env_set_mapsize(0)")
                }
            }
        }
    }

    func begin(parent: Transaction?, flags: UInt32) throws -> Transaction {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, parent?.txn, flags, &txn), "mdb_txn_begin")
        return Transaction(txn: txn!, environment: self, isReadOnly: flags & UInt32(MDB_RDONLY) != 0, parent: parent)
    }

    /// Current map size in bytes.
    public var mapSize: Int {
        var info = MDB_envinfo()
        resizeLock.shared { _ = mdb_env_info(env, &info) }
        return info.me_mapsize
    }

    /// Writes a consistent copy of the environment to the open file `fd`, while writers keep
    /// going; with `compact`, free pages are omitted (`MDB_CP_COMPACT`). The caller flushes
    /// and names the file (the CLI's `NewFile`: named only once whole).
    public func copy(toDescriptor fd: Int32, compact: Bool = true) throws {
        // Its own read transaction reads the map: no handle may grow it meanwhile.
        try resizeLock.shared { try check(mdb_env_copyfd2(env, fd, compact ? UInt32(MDB_CP_COMPACT) : 0), "mdb_env_copyfd2") }
    }

    /// Flushes buffers to disk (only matters with ``Options/unsafeNoSync``).
    public func sync() throws {
        // It reads the meta page in the map: no handle may grow it meanwhile.
        try resizeLock.shared { try check(mdb_env_sync(env, 1), "mdb_env_sync") }
    }
}
