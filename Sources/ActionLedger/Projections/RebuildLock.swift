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
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LedgerError(.storage, "cannot open \(path): \(String(cString: strerror(errno)))") }
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
