import CLMDB
import Foundation

/// What must hold of a store's path before LMDB opens it, and of its data file after.
///
/// LMDB names its lock file after the path it is given (`PATH-lock`), and that lock file
/// holds the writer mutex and the reader table. So one file reached by two names — a hard
/// link, or a symbolic link beside it — has two lock files, and writers through the two
/// names do not exclude each other: a hostile tester's two batches through `s.lmdb` and a
/// hard link to it were both acknowledged at the same seqs, and one was lost with
/// `verify --deep` saying ok. A symbolic link as the lock file is followed by LMDB's
/// `open(O_CREAT)`, which writes its table over whatever file the link names, from a
/// read-only `verify` too. And a lock file LMDB creates is sparse: on a full file system
/// the first touch of its mapped pages kills the process with SIGBUS (which `verify`
/// reported as a damaged store).
extension Environment {
    /// The lock file's size as LMDB 0.9 makes it: a header of three cache lines, less the
    /// one reader slot it includes, plus a 64-byte slot per reader. Every process sharing
    /// the file takes its reader count from the file's size, so any size is consistent.
    static func lockFileSize(maxReaders: UInt32) -> Int { Int(maxReaders) * 64 + 128 }

    /// Refuses a symbolic link as the data file or its lock file, or a lock file that is
    /// not a plain file; allocates the lock file's blocks (creating it when absent) so that
    /// a full disk is a `storage_error` here, not a SIGBUS later.
    static func preparePaths(_ path: String, _ options: Options, noLock: Bool) throws {
        var info = stat()
        if lstat(path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFLNK {
                throw LedgerError(.invalidInput, "\(path) is a symbolic link: open the store by its own name (LMDB names its "
                    + "lock file after the path, and two names would make two writer locks)", details: ["field": "db"])
            }
            // Checked again once open (``requireOneName``); here so that no lock file is made for the other name.
            if info.st_nlink > 1 { throw manyNames(path, Int(info.st_nlink)) }
        }
        guard !noLock else { return }
        let lock = path + "-lock"
        if lstat(lock, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw LedgerError(.invalidInput, "\(lock) is not a plain file (a symbolic link or another kind): LMDB would "
                    + "write its lock table through it; remove it", details: ["field": "db"])
            }
            // Allocated already, or this process has it open (closing another descriptor of
            // it here would drop that open's fcntl locks): nothing to do.
            guard Int(info.st_blocks) * 512 < Int(info.st_size) || info.st_size == 0,
                  !LockFiles.isOpen(FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))) else { return }
            try allocate(lock, flags: O_RDWR, size: info.st_size == 0 ? lockFileSize(maxReaders: options.maxReaders) : Int(info.st_size),
                         readOnly: options.readOnly)
        } else if errno == ENOENT {
            try allocate(lock, flags: O_RDWR | O_CREAT | O_EXCL, size: lockFileSize(maxReaders: options.maxReaders),
                         readOnly: options.readOnly)
        }
    }

    private static func allocate(_ lock: String, flags: Int32, size: Int, readOnly: Bool) throws {
        let fd = open(lock, flags | O_NOFOLLOW | O_CLOEXEC, 0o600)
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
        let result = posix_fallocate(fd, 0, off_t(size))
        if result == ENOSPC {
            if flags & O_CREAT != 0 { unlink(lock) }
            throw LedgerError(.storage, "no space left on the device for \(lock) (LMDB's lock file, \(size) bytes): free some "
                + "space, then run the command again; the store was not opened", details: ["field": "db"])
        }
        // Other failures (a file system without fallocate) leave LMDB's own sizing.
    }

    /// Refuses a data file with more than one name (a hard link): see the type's comment.
    static func requireOneName(_ env: OpaquePointer, _ path: String) throws {
        var fd: Int32 = -1
        var info = stat()
        guard mdb_env_get_fd(env, &fd) == 0, fd >= 0, fstat(fd, &info) == 0 else { return }
        guard info.st_nlink <= 1 else { throw manyNames(path, Int(info.st_nlink)) }
    }

    static func manyNames(_ path: String, _ count: Int) -> LedgerError {
        LedgerError(.invalidInput, "\(path) has \(count) names (hard links): LMDB names its lock file after the path, so "
            + "writers through another name would not exclude this one's; remove the other names, then open it again",
            details: ["field": "db", "links": .number(Double(count))])
    }
}

/// The lock files this process's environments have open, by identity: a second open of
/// one must not open and close a descriptor of it (POSIX drops a process's fcntl locks on a
/// file when any of its descriptors of it closes).
enum LockFiles {
    // Safe to share: the set is only touched under `lock`.
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
