import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Keeps two rebuilds from running at once: an exclusive `flock` on `PATH-rebuild.lock`,
/// held for the rebuild's life. The kernel drops it when the process dies (even on
/// SIGKILL), so a killed rebuild never leaves a stale lock behind.
final class RebuildLock {
    private let fd: Int32
    let path: String

    /// Takes the lock without waiting.
    /// - throws: `busy` when another rebuild holds it.
    init(ledgerPath: String) throws {
        path = ledgerPath + "-rebuild.lock"
        // O_NOFOLLOW: a link planted at the name (in a shared folder) would have the rebuild
        // create a file wherever it leads, as whoever runs the rebuild. Refused, as at `-lock`.
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw LedgerError(.invalidInput, "\(path) is a symbolic link: a rebuild creates its lock file only at its own "
                    + "name; remove it", details: ["field": "db"])
            }
            let reason = String(cString: strerror(errno))
            // Something there that is no plain file (a folder, a socket: open fails on them).
            var there = stat()
            if lstat(path, &there) == 0, there.st_mode & S_IFMT != S_IFREG { throw Self.notPlain(path) }
            throw LedgerError(.storage, "cannot open \(path): \(reason)")
        }
        // As `-lock` is (StoreOwner): another user's, planted in a shared folder, could hold
        // every rebuild off for good.
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, StoreOwner.accepts(info.st_uid, beside: ledgerPath) else {
            close(fd)
            throw info.st_mode & S_IFMT == S_IFREG ? StoreOwner.refusal(path, uid: info.st_uid, store: ledgerPath)
                : Self.notPlain(path)
        }
        if info.st_uid == geteuid() {
            // Owner read-write whatever the umask (0277 left it read-only: the next rebuild could not open it).
            fchmod(fd, 0o600)
            StoreOwner.give(fd, toOwnerOf: ledgerPath)
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK {
                throw LedgerError(.busy, "another rebuild is running on this ledger (it holds \(path))")
            }
            throw LedgerError(.storage, "cannot lock \(path): \(String(cString: strerror(code)))")
        }
    }

    /// Anything at the name that is no plain file (a folder, a socket, a FIFO).
    private static func notPlain(_ path: String) -> LedgerError {
        LedgerError(.invalidInput, "\(path) is not a plain file; remove it", details: ["field": "db"])
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
