import ActionLedger
import Foundation

/// Where `init`, `import` and `demo` make a store before it has its name: a file in the
/// path's folder named `.ledger-KIND-PID-RANDOM` (short, so a long store name leaves it room;
/// a random suffix nobody can guess, so two runs never share one, not even with one PID in two
/// containers), created by the run alone (`O_EXCL|O_NOFOLLOW`: nothing planted there is
/// followed or written through, as a store's own path would be). The store is moved to its
/// name only whole.
enum ScratchStore {
    /// Makes the empty, owner-only scratch file of `kind` (`creating`, `importing`,
    /// `building`) in `path`'s folder and returns its path; first removes those killed runs
    /// left (``AbandonedScratch/remove(in:prefix:)``), and those earlier builds named
    /// `PATH.KIND-PID` beside the path.
    /// - throws: `storage_error` when the folder takes no new file.
    static func make(beside path: String, kind: String) throws -> String {
        let dir = PathName.folder(of: path), prefix = ".ledger-\(kind)-"
        AbandonedScratch.remove(in: dir, prefix: prefix)
        if kind != "creating" { AbandonedScratch.remove(in: dir, prefix: PathName.name(of: path) + "." + kind + "-") }
        let scratch = dir + "/" + prefix + "\(getpid())-" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let fd = open(scratch, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw LedgerError(.storage, "cannot create a file in \(dir) to make the store in: \(String(cString: strerror(errno)))")
        }
        // 0600 whatever the umask: a umask that takes the owner's write bit (0277) would leave
        // a store LMDB cannot open for writing.
        fchmod(fd, 0o600)
        // Root replacing another user's store (`demo --fresh`) gives the new one to its owner,
        // whose lock file stays beside it.
        StoreOwner.give(fd, toOwnerOf: path)
        close(fd)
        return scratch
    }

    enum Move {
        case moved
        /// Something was created at the path meanwhile: kept as it is.
        case taken
        /// The file system cannot move a file without replacing what is there.
        case unsupported
    }

    /// Moves `scratch` to `path` unless something is there (`renameat2`, `RENAME_NOREPLACE`:
    /// atomic, replaces nothing, and needs no second name, so no hard links either).
    static func move(_ scratch: String, to path: String) throws -> Move {
        guard let renameat2 else { return .unsupported }
        if renameat2(AT_FDCWD, scratch, AT_FDCWD, path, 1 /* RENAME_NOREPLACE */) == 0 { return .moved }
        switch errno {
        case EEXIST: return .taken
        case EINVAL, ENOSYS, EOPNOTSUPP: return .unsupported
        default: throw LedgerError(.storage, "cannot move the new store to \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// glibc's `renameat2`, which Swift's Glibc module does not declare (it is a GNU
    /// extension): looked up once; nil where the C library has none.
    private static let renameat2: (@convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32)? = {
        // A nil handle is glibc's RTLD_DEFAULT: the symbol as the process's libraries define it.
        guard let symbol = dlsym(nil, "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32).self)
    }()
}
