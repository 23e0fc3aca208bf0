import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whose a store's side files are (its `-lock`, `-rebuild.lock`, a store made to replace it):
/// the store file's owner's. Another user's file there, planted in a shared folder, could
/// hold the store's locks; a file root makes for another user's store must be that user's,
/// or a 0600 file of root's keeps the owner out.
public enum StoreOwner {
    /// The owner of `store`; this process's user for a store not made yet.
    public static func of(_ store: String) -> uid_t {
        var info = stat()
        return stat(store, &info) == 0 ? info.st_uid : geteuid()
    }

    /// Whether a file of `uid` beside `store` is one the store can use: its owner's, or root's
    /// (only root can make a file root's, so it is no one's plant).
    public static func accepts(_ uid: uid_t, beside store: String) -> Bool {
        uid == 0 || uid == of(store)
    }

    /// Gives the file open as `fd` to `store`'s owner when root makes it for another user's
    /// store (nothing otherwise; a failure, such as root squashed on NFS, leaves it as it is).
    public static func give(_ fd: Int32, toOwnerOf store: String) {
        var info = stat()
        if geteuid() == 0, stat(store, &info) == 0, info.st_uid != 0 { fchown(fd, info.st_uid, info.st_gid) }
    }

    /// The refusal of `file`, of `uid`, beside `store`.
    public static func refusal(_ file: String, uid: uid_t, store: String) -> LedgerError {
        LedgerError(.invalidInput, "\(file) belongs to another user (uid \(uid), the store's owner is uid \(of(store))): a file "
            + "someone else made beside the store is not the store's to use (its locks, its sessions); remove it", details: ["field": "db"])
    }
}
