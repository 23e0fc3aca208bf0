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
            throw LedgerError(.storage, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat(), data = stat()
        // Owner read-write whatever the umask (0277 made it read-only: the next rebuild could not open it).
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid != geteuid() || fchmod(fd, 0o600) == 0 else {
            close(fd)
            throw LedgerError(.invalidInput, "\(path) is not a plain file; remove it", details: ["field": "db"])
        }
        // As for `-lock`: the store owner's (root making it gives it to them), or root's; another
        // user's, planted in a shared folder, could hold every rebuild off for good.
        if stat(ledgerPath, &data) == 0 {
            if geteuid() == 0, info.st_uid == 0, data.st_uid != 0 {
                fchown(fd, data.st_uid, data.st_gid)
            } else if info.st_uid != data.st_uid && info.st_uid != 0 {
                close(fd)
                throw LedgerError(.invalidInput, "\(path) belongs to another user (uid \(info.st_uid), the store's owner is uid "
                    + "\(data.st_uid)); remove it", details: ["field": "db"])
            }
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

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
