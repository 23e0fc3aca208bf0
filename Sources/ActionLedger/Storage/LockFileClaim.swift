import CLMDB
import Foundation

/// Which lock file an open of the data file uses, said on the data file itself, so that two
/// opens using two lock files — the file reached by two names: a hard link, a bind mount —
/// find each other, however the names look.
///
/// Each environment holds a shared open-file-description lock (`F_OFD_SETLK`) on one byte of
/// the data file far past its end, at an offset derived from its lock file's identity, and
/// asks (`F_OFD_GETLK`) whether anyone holds a byte of that range for another lock file: at
/// the open, and before every write. Opens sharing a lock file share the byte, so they never
/// conflict; LMDB takes no fcntl lock on the data file, so these touch none of its own; and
/// an OFD lock belongs to this descriptor alone (closing another descriptor of the file, or
/// another environment of this process, leaves it), unlike a classic POSIX lock.
final class LockFileClaim: Sendable {
    private let fd: Int32
    private let offset: Int64
    private let path: String

    private static let base: Int64 = 1 << 62, span: Int64 = 1 << 40

    /// Claims `path`'s data file (open as `env`) for the lock file `lock`.
    /// - returns: nil where the system has no OFD locks (the link count was checked instead).
    /// - throws: `invalid_input` when another open of the file uses another lock file.
    init?(_ env: OpaquePointer, path: String, lock: FileIdentity) throws {
        self.path = path
        let mixed = (lock.inode &* 0x9E37_79B9_7F4A_7C15) ^ (lock.device &* 0xC2B2_AE3D_27D4_EB4F)
        offset = Self.base + Int64(mixed % UInt64(Self.span))
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw LedgerError(.storage, "cannot open \(path): \(String(cString: strerror(errno)))") }
        // The same file LMDB mapped, not one renamed in since.
        // Every property is set from here on, so a failed init still runs deinit, which closes
        // the descriptor (closing it here too closed it twice: a number another thread may
        // have been given meanwhile).
        guard FileIdentity(fd: fd) == FileIdentity.of(env) else {
            throw LedgerError(.storage, "\(path) was replaced while it was opened: open it again")
        }
        guard RangeLock(fd: fd).lock(offset, shared: true) else {
            // Held by another open for another lock file cannot fail a shared lock; so no OFD
            // locks here (another system, an old kernel, a file system without them): a second
            // name is found by the link count alone, which cannot see a bind mount.
            var info = stat()
            let links = fstat(fd, &info) == 0 ? Int(info.st_nlink) : 1
            if links > 1 { throw Self.twoLocks(path, open: true) }
            return nil
        }
        try requireSole(open: true)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Refuses when another open of the data file uses another lock file.
    /// - throws: `invalid_input` at the open (`open`), `storage_error` before a write.
    func requireSole(open: Bool = false) throws {
        let range = RangeLock(fd: fd)
        if range.isHeldElsewhere(Self.base, length: offset - Self.base)
            || range.isHeldElsewhere(offset + 1, length: Self.base + Self.span - offset - 1) {
            throw Self.twoLocks(path, open: open)
        }
    }

    private static func twoLocks(_ path: String, open: Bool) -> LedgerError {
        LedgerError(open ? .invalidInput : .storage, "\(path) is open in another process under another name (a hard link, a "
            + "bind mount), or with a lock file since removed or replaced: LMDB names its lock file after the path, so writers "
            + "with two lock files would overwrite each other's commits; \(open ? "it was not opened" : "nothing was written"): "
            + "use one name for the store, and stop the processes holding an old lock file", details: ["field": "db"])
    }
}
