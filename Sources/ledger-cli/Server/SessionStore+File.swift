import ActionLedger
import Foundation

extension SessionStore {
    /// Makes sure the sessions file at `path` is the server's own before LMDB opens it: it
    /// holds every kept response (whole action records) and the sessions' hashes, and lies in
    /// the store's folder, where another user may plant a name. One there must be a plain
    /// file of one name (not a link: LMDB would write through it), the store's owner's or
    /// root's; a missing one is made here, owner-only whatever the umask, and given to the
    /// store's owner when root makes it (LMDB's own creation took the umask, and root's
    /// file kept the owner's server out).
    /// - parameter store: the store it serves (its owner owns the file); nil: this user.
    /// - throws: `invalid_input` for a file that is not the server's to use.
    /// - returns: whether this call made the file (removed again when the start fails).
    static func prepareFile(_ path: String, store: String?) throws -> Bool {
        var info = stat(), made = false
        if lstat(path, &info) != 0, errno == ENOENT {
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            // Taken meanwhile (EEXIST: checked below as any other), or a folder it cannot
            // write: LMDB's open decides and says why.
            if fd >= 0 {
                fchmod(fd, 0o600)
                if let store { StoreOwner.give(fd, toOwnerOf: store) }
                close(fd)
                made = true
            }
        }
        if lstat(path, &info) == 0 { try requireOwn(info, path, store: store) }
        return made
    }

    /// The file LMDB opened, checked as ``prepareFile(_:store:)`` checked the name: the same
    /// file (another user's put there between the check and the open is refused), plain, of
    /// one name, the store owner's or root's.
    static func requireOpenedOwn(_ environment: Environment, _ path: String, store: String?) throws {
        var named = stat()
        guard let opened = environment.openedFileStatus(), lstat(path, &named) == 0,
              named.st_dev == opened.st_dev, named.st_ino == opened.st_ino else {
            throw LedgerError(.invalidInput, "\(path) was replaced as the server opened it: another process is making or "
                + "moving files beside the store; nothing was written", details: ["field": "db"])
        }
        try requireOwn(opened, path, store: store)
    }

    private static func requireOwn(_ info: stat, _ path: String, store: String?) throws {
        guard info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            throw LedgerError(.invalidInput, "\(path) is not a plain file of one name (a link, or another kind): the server "
                + "keeps its sessions and responses there and would write them through it; remove it", details: ["field": "db"])
        }
        // No store to compare with: the file must be this user's (or root's).
        let accepted = store.map { StoreOwner.accepts(info.st_uid, beside: $0) } ?? (info.st_uid == 0 || info.st_uid == geteuid())
        guard accepted else { throw StoreOwner.refusal(path, uid: info.st_uid, store: store ?? path) }
    }

    /// Refuses an environment at `path` that is no sessions store: an ActionLedger store
    /// (its log's databases), whose file the server would otherwise write its tables into.
    static func requireNoLog(_ environment: Environment, _ path: String) throws {
        let isStore = try environment.read { txn in
            try ["events", "log_index"].contains { try txn.openDatabase($0, create: false) != nil }
        }
        if isStore {
            throw LedgerError(.invalidInput, "\(path) is an ActionLedger store, not the server's sessions file: the server would "
                + "write its tables into it; move it away", details: ["field": "db"])
        }
    }
}
