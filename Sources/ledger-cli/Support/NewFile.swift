import ActionLedger
import Foundation

/// A new file that gets its name only once it is whole (`backup`, `export --out`): until
/// ``commit()`` it has no name at all (`O_TMPFILE`, so a process killed part-way leaves
/// nothing behind), or, where the file system (or a missing `/proc`) cannot do that, the name
/// `DEST.partial-PID`, removed when the command fails (a killed process leaves it). The name DEST is never a half-written
/// file, never replaces anything (a file, a directory, a symlink, dangling or not), and the
/// file is owner-only (0600), as the store is.
final class NewFile {
    let destination: String
    /// Where the bytes go.
    let fd: Int32
    private let partial: String?
    private var committed = false

    /// - parameter unnamed: whether to try the unnamed file first (tests pass false to run
    ///   the named fallback, which every file system here would otherwise never take).
    /// - throws: `invalid_input` when DEST exists or its folder cannot take a new file.
    init(_ destination: String, unnamed tryUnnamed: Bool = true) throws {
        self.destination = destination
        guard !Self.exists(destination) else { throw LedgerError(.invalidInput, "\(destination) already exists") }
        let dir = Self.directory(of: destination)
        // Checked before any work, so a bad path never costs a whole copy that cannot be named.
        try Self.requireNewPath(destination)
        // An unnamed file is named through /proc/self/fd: without /proc, the named fallback.
        let unnamed = tryUnnamed && access("/proc/self/fd", F_OK) == 0
            ? Self.tmpfile.map { open(dir, $0 | O_WRONLY | O_CLOEXEC, 0o600) } ?? -1 : -1
        if unnamed >= 0 {
            (fd, partial) = (unnamed, nil)
        } else {
            let path = destination + ".partial-\(getpid())"
            // O_EXCL|O_NOFOLLOW: a planted name (a symlink included) is refused, never followed.
            let named = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard named >= 0 else {
                let code: LedgerError.Code = errno == EEXIST || errno == ELOOP || errno == EACCES ? .invalidInput : .storage
                throw LedgerError(code, "cannot create \(path): \(String(cString: strerror(errno)))")
            }
            (fd, partial) = (named, path)
        }
        fchmod(fd, 0o600)  // exactly owner-only, whatever the umask
    }

    deinit {
        close(fd)
        if let partial, !committed { unlink(partial) }
    }

    /// Flushes the file and gives it its name, durably.
    /// - throws: `invalid_input` when DEST appeared meanwhile (it is kept); `storage_error`.
    func commit() throws {
        guard fsync(fd) == 0 else { throw LedgerError(.storage, "cannot flush \(destination): \(String(cString: strerror(errno)))") }
        // link, never rename: it fails when DEST exists, so whatever appeared there meanwhile is kept.
        let linked = partial.map { link($0, destination) }
            ?? linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, destination, AT_SYMLINK_FOLLOW)
        guard linked == 0 else {
            if errno == EEXIST { throw LedgerError(.invalidInput, "\(destination) already exists (written meanwhile)") }
            throw LedgerError(.storage, "cannot name \(destination): \(String(cString: strerror(errno)))")
        }
        committed = true
        if let partial { unlink(partial) }
        Environment.syncDirectory(of: destination)  // the new name survives a crash
    }

    /// Writes all of `bytes` to `fd` (a partial write goes on; EINTR is retried).
    /// - throws: `storage_error` naming `what` and the reason.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ what: String) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw LedgerError(.storage, "cannot write \(what): \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    /// Refuses a path no new file can be given: empty, ending in `/`, in a folder that does not
    /// exist, or with a name longer than the file system takes (checked up front, where the
    /// name would otherwise fail only once the work is done).
    /// - throws: `invalid_input`.
    static func requireNewPath(_ destination: String) throws {
        let dir = directory(of: destination)
        var st = stat()
        guard !destination.isEmpty, !destination.hasSuffix("/"), stat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw LedgerError(.invalidInput, "\(destination.isEmpty ? "an empty path" : destination) is not a file path in an existing folder")
        }
        // A folder this user may not add a name to: the file would be made only to fail there.
        guard access(dir, W_OK | X_OK) == 0 else {
            throw LedgerError(.invalidInput, "\(destination): no file can be made in \(dir): \(String(cString: strerror(errno)))")
        }
        let name = PathName.name(of: destination)
        let limit = pathconf(dir, Int32(_PC_NAME_MAX))
        guard name.utf8.count <= (limit > 0 ? limit : 255), destination.utf8.count < Int(PATH_MAX) else {
            throw LedgerError(.invalidInput, "\(destination): the name is longer than the file system takes")
        }
    }

    /// Whether anything is at `path`: a file, a directory, or a symlink, dangling or not.
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    private static func directory(of path: String) -> String {
        PathName.folder(of: path)
    }

    /// Linux's `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), which Glibc's module does not export:
    /// its value on the architectures this builds for.
    private static let tmpfile: Int32? = {
        #if os(Linux) && (arch(x86_64) || arch(arm64))
        return 0o20000000 | O_DIRECTORY
        #else
        return nil
        #endif
    }()
}
