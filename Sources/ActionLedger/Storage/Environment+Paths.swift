import CLMDB
import Foundation

/// What must hold of a store's path before LMDB opens it.
///
/// LMDB names its lock file after the path it is given (`PATH-lock`), and that lock file
/// holds the writer mutex, the reader table and the last transaction id the writers build
/// on. So one data file reached by two names — a hard link, a bind mount, a symbolic link
/// beside it — has two lock files, and writers through the two names overwrite each other's
/// commits (a hostile tester's batches through two names were all acknowledged and some
/// lost, `verify --deep` saying ok). Names cannot tell a bind mount, so that is caught by
/// the data file itself (``LockFileClaim``); here the path's own hazards: a symbolic link
/// as the store, and a lock file that is a link (LMDB's `open(O_CREAT)` follows a symbolic
/// link, and writes its table into whatever file a link names, from a read-only `verify`
/// too; two stores sharing one lock file share its transaction id). And a lock file LMDB
/// creates is sparse: on a full file system the first touch of a mapped page is SIGBUS.
extension Environment {
    /// What the engine allocates for the lock file: LMDB 0.9 wants 64 bytes per reader plus
    /// a header of two or three cache lines plus padding (192 bytes on x86-64, 256 where
    /// `pthread_mutex_t` is larger, as on aarch64), so this is rounded up to whole pages.
    /// Every process sharing the file takes its reader count from the file's size, so a
    /// larger file is consistent for all of them.
    static func lockFileSize(maxReaders: UInt32) -> Int { (Int(maxReaders) * 64 + 256 + 4095) / 4096 * 4096 }

    /// The path LMDB is given: `path`, or where a symbolic link there leads (so the lock file
    /// is the one beside the store itself, whichever link names it: `ledger.lmdb ->
    /// /data/ledger.lmdb` keeps working with one lock file).
    /// - throws: `invalid_input` for a link that leads nowhere (LMDB would create a store
    ///   where it points).
    static func resolve(_ path: String) throws -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return path }
        guard let resolved = realpath(path, nil) else {
            let reason = errno == ENOENT ? "leads to nothing: no store is there" : "cannot be followed: \(String(cString: strerror(errno)))"
            throw LedgerError(.invalidInput, "\(path) is a symbolic link that \(reason)", details: ["field": "db"])
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Refuses a lock file that is a link or no plain file; allocates the lock file's blocks
    /// (creating it whole when absent) so that a full disk is a `storage_error` here, not a
    /// SIGBUS later. Runs under ``opening``, on a path ``resolve(_:)`` gave.
    static func preparePaths(_ path: String, _ options: Options, noLock: Bool) throws {
        var info = stat()
        guard !noLock else { return }
        let lock = path + "-lock"
        guard lstat(lock, &info) == 0 else {
            guard errno == ENOENT else { return }
            try create(lock, size: lockFileSize(maxReaders: options.maxReaders), store: path)
            // Whichever file the name holds now (another process's link may have won the race,
            // or nothing, where the folder takes no file and LMDB decides): checked as any other.
            if lstat(lock, &info) == 0 { try requireUsable(lock, info, store: path) }
            return
        }
        try requireUsable(lock, info, store: path)
        // Whole already, empty (LMDB sizes it, as its first opener), or open in this process
        // (closing a descriptor of it here would drop that open's fcntl locks): nothing to do.
        let size = Int(info.st_size)
        guard size > 0, Int(info.st_blocks) * 512 < size,
              !LockFiles.isOpen(FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))) else { return }
        // Its blocks only, at the size it has: every process sharing it takes its reader count
        // from that size, so it never changes under them. No fcntl lock is taken on it (one on
        // its first byte would make a concurrent LMDB opener skip setting its table up).
        let fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return try refuseLink(lock) }
        defer { close(fd) }
        try fallocate(fd, lock, size)
    }

    /// Refuses, before any work, a lock file at `path` that the store a command is about to
    /// make there could not use (``requireUsable(_:_:store:)``); none there is fine.
    /// - throws: `invalid_input`.
    public static func requireUsableLockFile(for path: String) throws {
        var info = stat()
        let lock = path + "-lock"
        if lstat(lock, &info) == 0 { try requireUsable(lock, info, store: path) }
    }

    /// Takes `PATH-lock` when it is a lock file left behind with no store at `path` that a new
    /// store there can take as its own: a plain file of one name, the running user's, that no
    /// process has open (LMDB sets a lock file up afresh when it opens one nobody holds). An
    /// `init` killed between making it and moving its store in, or a store removed without
    /// it, leaves one; anything else at that name (a link, another user's file, one in use)
    /// is no leftover.
    /// Taken, it is made owner-only (0600), as a lock file the engine makes is: one left by a
    /// store shared with a group (0660), or made under a loose umask, would let others write
    /// the new store's writer mutex and reader table.
    public static func takeLeftoverLockFile(for path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) != 0, errno == ENOENT else { return false }
        let lock = path + "-lock"
        guard lstat(lock, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1,
              info.st_uid == geteuid(), !isOpenElsewhere(path) else { return false }
        let fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var opened = stat()
        // The file checked above, still (not one put at the name since).
        guard fstat(fd, &opened) == 0, opened.st_dev == info.st_dev, opened.st_ino == info.st_ino else { return false }
        return fchmod(fd, 0o600) == 0
    }

    /// Makes the lock file of the store about to be moved to `path` (`init`, `import`, `demo`),
    /// before the move: a name left free beside a new store would be anyone's to take in a
    /// shared folder. One there already must be usable.
    /// - throws: `invalid_input` for one that is not (nothing is moved then).
    public static func makeLockFile(for path: String) throws {
        // preparePaths checks the one it finds or makes.
        try opening.withLock { try preparePaths(path, Options(), noLock: false) }
    }

    /// A lock file must be a plain file of one name, and the store's owner's (``StoreOwner``):
    /// one another user made in a shared folder holds the writer mutex and the reader table,
    /// so that user could stall every open of the store (a held fcntl lock) or unsettle its readers.
    private static func requireUsable(_ lock: String, _ info: stat, store path: String) throws {
        guard info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            throw LedgerError(.invalidInput, "\(lock) is not a plain file of one name (a link, or another kind): LMDB would "
                + "write its lock table into it; remove it", details: ["field": "db"])
        }
        guard StoreOwner.accepts(info.st_uid, beside: path) else { throw StoreOwner.refusal(lock, uid: info.st_uid, store: path) }
    }

    /// Makes `lock` whole before anyone opens it: written in full under a temporary name and
    /// linked into place (never over a file another process made meanwhile, which is kept).
    private static func create(_ lock: String, size: Int, store: String) throws {
        // Not a name anyone can plant first (a planted one made this give up, and LMDB's own
        // O_CREAT then made the lock file, through a link if one was there).
        let temporary = lock + ".new-\(getpid())-" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        // A folder that is missing or not ours to write (auditor mode falls back to no lock
        // file): LMDB's own open decides and says why.
        guard fd >= 0 else { return }
        defer {
            close(fd)
            unlink(temporary)
        }
        fchmod(fd, 0o600)
        StoreOwner.give(fd, toOwnerOf: store)
        try fallocate(fd, lock, size)
        _ = link(temporary, lock)  // EEXIST: another process made it first; theirs is used
    }

    /// Whether another process has the store at `path` open: LMDB holds a shared fcntl lock
    /// on its lock file's first byte while an environment is open. Asked (F_GETLK takes
    /// nothing) only when this process has no environment on that lock file, since closing
    /// the descriptor asked through would drop that environment's locks.
    public static func isOpenElsewhere(_ path: String) -> Bool {
        opening.withLock {
            let lock = (try? resolve(path)).map { $0 + "-lock" } ?? path + "-lock"
            var info = stat()
            guard lstat(lock, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                  !LockFiles.isOpen(FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))) else { return false }
            let fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var probe = flock()
            probe.l_type = Int16(F_WRLCK)
            probe.l_whence = Int16(SEEK_SET)
            probe.l_len = 1
            // A lock file that cannot be asked counts as open: callers replace or delete on "no".
            return fcntl(fd, F_GETLK, &probe) != 0 || probe.l_type != Int16(F_UNLCK)
        }
    }

    private static func fallocate(_ fd: Int32, _ lock: String, _ size: Int) throws {
        #if os(Linux)
        if posix_fallocate(fd, 0, off_t(size)) == ENOSPC {
            throw LedgerError(.storage, "no space left on the device for \(lock) (LMDB's lock file, \(size) bytes): free some "
                + "space, then run the command again; the store was not opened", details: ["field": "db"])
        }
        #endif
        // Other failures (a file system without fallocate) leave LMDB's own sizing.
    }

    private static func refuseLink(_ lock: String) throws {
        // A link put there since the lstat: refused as above.
        if errno == ELOOP {
            throw LedgerError(.invalidInput, "\(lock) is a symbolic link: LMDB would write its lock table through it; remove it",
                              details: ["field": "db"])
        }
    }

    /// A new LMDB environment on `path` (``preparePaths(_:_:noLock:)`` first); stale reader
    /// slots of crashed processes cleared. Runs under ``opening``, only when this process
    /// holds no environment on the store (SharedHandle).
    static func openHandle(_ path: String, _ options: Options, noLock: Bool) throws -> OpaquePointer {
        try preparePaths(path, options, noLock: noLock)
        var handle: OpaquePointer?
        try check(mdb_env_create(&handle), "mdb_env_create")
        guard let handle else { throw LMDBError(code: ENOMEM, operation: "mdb_env_create") }
        do {
            try check(mdb_env_set_maxdbs(handle, options.maxDatabases), "mdb_env_set_maxdbs")
            try check(mdb_env_set_maxreaders(handle, options.maxReaders), "mdb_env_set_maxreaders")
            if !options.readOnly {
                // LMDB opens with this size, or with the file's data if that is larger: not
                // with the size the file records, to which an earlier process grew the map
                // (adopted below, once open).
                try check(mdb_env_set_mapsize(handle, options.mapSize), "mdb_env_set_mapsize")
            }
            var flags = UInt32(MDB_NOSUBDIR | MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            if options.unsafeNoSync { flags |= UInt32(MDB_NOSYNC) }
            if noLock { flags |= UInt32(MDB_NOLOCK) }
            // Owner-only (the data file and its -lock): the store is every org's whole audit
            // record, and the server's org and role scoping means nothing to a reader of the file.
            try check(mdb_env_open(handle, path, flags, 0o600), "mdb_env_open(\(path))")
            try requireWholeFile(handle, path)
            if !options.readOnly { try adoptRecordedMapSize(handle, atLeast: options.mapSize) }
            var dead: Int32 = 0
            if !noLock { _ = mdb_reader_check(handle, &dead) }
        } catch {
            mdb_env_close(handle)
            throw error
        }
        return handle
    }

    /// Maps the file at the size its meta page records (what the process that last grew the
    /// map set), or `atLeast`, whichever is larger. Opened at only the size of its data, a new
    /// process's first write that needs a new page would fail `MDB_MAP_FULL`, and its whole
    /// transaction (a batch of a thousand proposals) would run twice. No transaction is open:
    /// this handle is new and not yet shared.
    private static func adoptRecordedMapSize(_ handle: OpaquePointer, atLeast minimum: Int) throws {
        // Size 0 on an open environment: the size the newest meta page records.
        try check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize(0)")
        var info = MDB_envinfo()
        try check(mdb_env_info(handle, &info), "mdb_env_info")
        if info.me_mapsize < minimum { try check(mdb_env_set_mapsize(handle, minimum), "mdb_env_set_mapsize") }
    }

    /// LMDB maps the file and trusts its meta page, which it reads with `pread`: a file
    /// shorter than the pages that meta names (truncated, half a copy) would fault the
    /// process on the first read past its end (SIGBUS), `verify` included. So the file must
    /// hold every page before any is read.
    /// - throws: `integrity_failure` (`problem: truncated_file`) otherwise.
    private static func requireWholeFile(_ handle: OpaquePointer, _ path: String) throws {
        var info = MDB_envinfo(), stat = MDB_stat()
        try check(mdb_env_info(handle, &info), "mdb_env_info")
        try check(mdb_env_stat(handle, &stat), "mdb_env_stat")
        let needed = (Int(info.me_last_pgno) + 1) * Int(stat.ms_psize)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        guard size >= needed else {
            throw LedgerError(.integrityFailure, "\(path) holds \(size) bytes, but its LMDB meta page names \(info.me_last_pgno + 1) "
                + "pages (\(needed) bytes): the file is truncated", details: ["problem": "truncated_file"])
        }
    }
}
