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
            throw LedgerError(.invalidInput, "\(path) is a symbolic link to nothing: no store is there", details: ["field": "db"])
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Refuses a lock file that is a link or no plain file; allocates the lock file's blocks
    /// (creating it when absent) so that a full disk is a `storage_error` here, not a SIGBUS
    /// later. Runs under ``opening``, on a path ``resolve(_:)`` gave.
    static func preparePaths(_ path: String, _ options: Options, noLock: Bool) throws {
        var info = stat()
        guard !noLock else { return }
        let lock = path + "-lock", target = lockFileSize(maxReaders: options.maxReaders)
        guard lstat(lock, &info) == 0 else {
            if errno == ENOENT { try allocate(lock, create: true, size: target, grow: true) }
            return
        }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            throw LedgerError(.invalidInput, "\(lock) is not a plain file of one name (a link, or another kind): LMDB would "
                + "write its lock table into it; remove it", details: ["field": "db"])
        }
        let size = Int(info.st_size)
        // Whole already, or open in this process (closing a descriptor of it here would drop
        // that open's fcntl locks): nothing to do.
        guard size < target || Int(info.st_blocks) * 512 < size,
              !LockFiles.isOpen(FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))) else { return }
        try allocate(lock, create: false, size: max(size, target), grow: size < target)
    }

    /// Allocates `size` bytes of `lock`. Growing it is done only while no process has it
    /// open: under the write lock on its first byte that LMDB's first opener takes (one that
    /// opens meanwhile waits for it, then reads the new size); a file in use keeps its size
    /// (every process sharing it must agree on its reader count) and gets its blocks only.
    private static func allocate(_ lock: String, create: Bool, size: Int, grow: Bool) throws {
        let fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0), 0o600)
        guard fd >= 0 else {
            // A link put there since the lstat: refused as above.
            if errno == ELOOP {
                throw LedgerError(.invalidInput, "\(lock) is a symbolic link: LMDB would write its lock table through it; "
                    + "remove it", details: ["field": "db"])
            }
            // Made by another process meanwhile, a folder that is missing or not ours to write
            // (auditor mode falls back to no lock file): LMDB's own open decides and says why.
            return
        }
        defer { close(fd) }
        var length = size
        if grow {
            var first = flock()
            first.l_type = Int16(F_WRLCK)
            first.l_whence = Int16(SEEK_SET)
            first.l_len = 1
            if fcntl(fd, F_SETLK, &first) != 0 {
                var info = stat()
                guard fstat(fd, &info) == 0 else { return }
                length = Int(info.st_size)
            }
        }
        guard length > 0 else { return }
        #if os(Linux)
        // Left in place on failure (never unlinked: another process may have opened it
        // already): the next open allocates it again, or refuses again.
        if posix_fallocate(fd, 0, off_t(length)) == ENOSPC {
            throw LedgerError(.storage, "no space left on the device for \(lock) (LMDB's lock file, \(length) bytes): free some "
                + "space, then run the command again; the store was not opened", details: ["field": "db"])
        }
        #endif
        // Other failures (a file system without fallocate) leave LMDB's own sizing.
    }
}

/// The lock files this process's environments have open, by identity: a second open of
/// one must not open and close a descriptor of it (POSIX drops a process's fcntl locks on a
/// file when any of its descriptors of it closes). Read and changed under ``Environment/opening``
/// and its own lock.
enum LockFiles {
    // Safe to share: the table is only touched under `lock`.
    nonisolated(unsafe) private static var open: [FileIdentity: Int] = [:]
    private static let lock = NSLock()

    static func isOpen(_ id: FileIdentity) -> Bool { lock.withLock { open[id] != nil } }
    static func opened(_ id: FileIdentity) { lock.withLock { open[id, default: 0] += 1 } }
    static func closed(_ id: FileIdentity) {
        lock.withLock {
            open[id, default: 1] -= 1
            if open[id] == 0 { open[id] = nil }
        }
    }
}
