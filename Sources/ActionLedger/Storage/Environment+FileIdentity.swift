import CLMDB
import Foundation

/// The file an environment writes is the one at its path: `ledger demo --fresh` replaces a
/// store by renaming a new file over it, and a process that opened the old file before
/// then would otherwise go on committing into an unlinked inode, each write acknowledged
/// and lost. So every write transaction, once it holds LMDB's writer lock, checks that the
/// path still names the file it mapped (one `stat`, next to a commit's fsync); and a
/// replacement renames while holding that lock (``replaceFile(with:ifUnchanged:)``), so
/// no commit into the old file can be under way or follow it.
struct FileIdentity: Hashable {
    let device: UInt64
    let inode: UInt64

    init(device: UInt64, inode: UInt64) { (self.device, self.inode) = (device, inode) }

    /// The identity of the file open as `fd`.
    init?(fd: Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// The identity of the file at `path` now (following no symlink: LMDB opened the path itself).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// The identity of the data file `env` has open.
    static func of(_ env: OpaquePointer) -> FileIdentity? {
        var fd: Int32 = -1
        guard mdb_env_get_fd(env, &fd) == 0, fd >= 0 else { return nil }
        return FileIdentity(fd: fd)
    }
}

extension Environment {
    /// Refuses a write into a file that is no longer the one at ``path``.
    /// - throws: `storage`, naming the path, when it was replaced or removed since the open.
    /// The status (`fstat`) of the data file LMDB opened: what a caller checks of the file
    /// it got, whatever the path names by the time it looks.
    public func openedFileStatus() -> stat? {
        var fd: Int32 = -1, info = stat()
        guard mdb_env_get_fd(env, &fd) == 0, fd >= 0, fstat(fd, &info) == 0 else { return nil }
        return info
    }

    func requireFileInPlace() throws {
        if let opened = openedFile {
            var info = stat()
            // Through the link too (it follows): a link retargeted to another store while this
            // process runs would leave it committing into a file `--db` no longer names.
            guard stat(path, &info) == 0, FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) == opened,
                  linkPath.map({ FileIdentity(path: $0) == opened }) ?? true else {
                throw LedgerError(.storage, "\(path) was replaced or removed since this process opened it; nothing was written: "
                    + "open it again")
            }
        }
        // Another open of the file under another name (a hard link, a bind mount) uses
        // another lock file: no write goes on beside it (LockFileClaim.swift).
        try claim?.requireSole()
        // The lock file too: deleted or replaced, a process opening the store later takes a new
        // writer mutex, and two writers would commit at once, each overwriting the other.
        var lockInfo = stat()
        if let lock = openedLock, stat(path + "-lock", &lockInfo) != 0
            || FileIdentity(device: UInt64(lockInfo.st_dev), inode: UInt64(lockInfo.st_ino)) != lock || lockInfo.st_nlink != 1 {
            throw LedgerError(.storage, "\(path)-lock was removed, replaced or given another name since this process opened the store: its "
                + "writers no longer exclude each other's; nothing was written: stop every process using it, then open it again")
        }
    }

    /// Refuses a write transaction that would build on another snapshot than the data file's
    /// newest. LMDB numbers a write transaction from the id kept in the lock file and picks
    /// its base meta page by that id's parity; the lock file takes the data file's id only
    /// when its first process opens it. So a lock file some process kept open while the data
    /// file changed without it — a new file renamed over the store (`demo --fresh` beside a
    /// running server), commits made through another name's lock file — holds a stale id,
    /// and a write from it overwrites the newest commits: a hostile tester lost acknowledged
    /// writes both ways, `verify --deep` saying ok. The newest meta page's id, read from the
    /// file, must be the one this transaction follows.
    /// - throws: `storage`, nothing written.
    func requireLockInStep(_ txn: Transaction) throws {
        var fd: Int32 = -1
        guard mdb_env_get_fd(env, &fd) == 0, fd >= 0 else { return }
        // MDB_meta's mm_txnid: 16 bytes of page header, then magic, version, address, map
        // size, two MDB_db records and the last page (LMDB 0.9's layout), little-endian.
        func metaTransaction(_ page: Int) -> UInt64? {
            var id: UInt64 = 0
            guard pread(fd, &id, 8, off_t(page * pageSize + 144)) == 8 else { return nil }
            return UInt64(littleEndian: id)
        }
        guard let first = metaTransaction(0), let second = metaTransaction(1) else { return }
        let follows = UInt64(mdb_txn_id(txn.txn)) &- 1
        guard max(first, second) == follows else {
            throw LedgerError(.storage, "\(path)-lock is out of step with the store (its transaction id \(follows), the file's "
                + "\(max(first, second))): the file was replaced, or written under another name, while a process kept the lock "
                + "file open; nothing was written: stop every process using the store, then open it again",
                details: ["lock_transaction": .number(Double(follows)), "file_transaction": .number(Double(max(first, second)))])
        }
    }

    /// Renames `replacement` over this environment's file while holding its writer lock,
    /// after `check` (given a write transaction on the current file) accepted what the
    /// file holds: no commit into it can be under way, and every later one by a process
    /// that still has it open is refused (``requireFileInPlace()``). The directory is
    /// flushed, so the rename is durable. Nothing is written into the replaced file.
    /// - throws: what `check` throws (nothing is renamed), or `storage` when the rename fails.
    public func replaceFile(with replacement: String, ifUnchanged check: (Transaction) throws -> Void) throws {
        // Aborted, never committed, once renamed: whatever `check` opened stays unwritten.
        struct Renamed: Error {}
        do {
            try write { txn in
                try check(txn)
                guard rename(replacement, path) == 0 else {
                    throw LedgerError(.storage, "cannot move \(replacement) to \(path): \(String(cString: strerror(errno)))")
                }
                Environment.syncDirectory(of: path)
                throw Renamed()
            }
        } catch is Renamed {}
    }

    /// Flushes the directory holding `path`, making a rename or link into it durable.
    public static func syncDirectory(of path: String) {
        let fd = open(PathName.folder(of: path), O_RDONLY)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}
