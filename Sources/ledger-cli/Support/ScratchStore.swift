import ActionLedger
import Foundation

/// Where `init`, `import` and `demo` make a store before it has its name: a file beside the
/// path whose name ends in the run's PID and a random suffix nobody can guess (two runs never
/// share one, not even with one PID in two containers), created by the run alone
/// (`O_EXCL|O_NOFOLLOW`: nothing planted there is followed or written through, as a store's
/// own path would be). The store is moved to its name only whole.
enum ScratchStore {
    /// `init`'s, in the path's folder: short (a long store name leaves it room) and not named
    /// after the store.
    static let creatingPrefix = ".ledger-creating-"

    /// Makes the empty, owner-only file `base-RANDOM` (`base` ends in the PID) and returns its
    /// path; first removes the scratch stores of `prefix` in its folder that killed runs left
    /// (``AbandonedScratch/remove(in:prefix:)``).
    /// - throws: `storage_error` when the folder takes no new file.
    static func make(in dir: String, prefix: String) throws -> String {
        AbandonedScratch.remove(in: dir, prefix: prefix)
        let scratch = dir + "/" + prefix + "\(getpid())-" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let fd = open(scratch, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw LedgerError(.storage, "cannot create a file in \(dir) to make the store in: \(String(cString: strerror(errno)))")
        }
        close(fd)
        return scratch
    }

    /// The scratch store for `path` of `kind` (`importing`, `building`): `PATH.KIND-PID-RANDOM`.
    static func make(beside path: String, kind: String) throws -> String {
        try make(in: folder(of: path), prefix: (path as NSString).lastPathComponent + "." + kind + "-")
    }

    /// `init`'s scratch store for `path`: `.ledger-creating-PID-RANDOM` in its folder.
    static func makeCreating(beside path: String) throws -> String {
        try make(in: folder(of: path), prefix: creatingPrefix)
    }

    static func folder(of path: String) -> String {
        let dir = (path as NSString).deletingLastPathComponent
        return dir.isEmpty ? "." : dir
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
