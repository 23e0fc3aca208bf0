import ActionLedger
#if canImport(Glibc)
// `stdout` is C's global stream pointer, which Swift 6 flags as shared mutable state; it is
// set once by the C runtime before main and only read here, on the main path after a command.
@preconcurrency import Glibc
#endif

/// The process's standard descriptors, secured before anything is opened.
enum StandardStreams {
    /// Points each closed descriptor among 0, 1 and 2 at /dev/null. Otherwise the first file
    /// the process opens takes the lowest free number: with stdout or stderr closed that could
    /// be the store, opened read-write, and what `print` writes would land in it. A closed
    /// stdout is then refused (`invalid_input`, exit 2) before any work: a command's answer
    /// is its receipt, and nothing could be printed.
    static func secure() {
        var stdoutClosed = false
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0, opened != fd {
                dup2(opened, fd)
                close(opened)
            }
            if fd == 1 { stdoutClosed = true }
        }
        if stdoutClosed {
            Output.stderr("error: stdout is closed: nothing could be printed; give the command a stdout (e.g. >/dev/null) "
                + "[\(LedgerError.Code.invalidInput.rawValue)]")
            exit(LedgerError.Code.invalidInput.exitStatus)
        }
    }

    /// Refuses to open the store at `path` when stdout or stderr is that file or its lock
    /// file (`1<>store`): what the command prints would be written over the store. Every
    /// such descriptor is first pointed at /dev/null (both, when both are: `1<>store 2>&1`),
    /// so not even the refusal lands in the store.
    /// - throws: `invalid_input`.
    static func requireApart(from path: String) throws {
        var files: [(dev_t, ino_t)] = []
        for p in [path, path + "-lock"] {
            var st = stat()
            if stat(p, &st) == 0 { files.append((st.st_dev, st.st_ino)) }
        }
        let onto = [(Int32(1), "stdout"), (2, "stderr")].filter { fd, _ in
            var st = stat()
            return fstat(fd, &st) == 0 && files.contains(where: { $0.0 == st.st_dev && $0.1 == st.st_ino })
        }
        guard let (_, name) = onto.first else { return }
        for (fd, _) in onto {
            let null = open("/dev/null", O_WRONLY)
            if null >= 0 { dup2(null, fd); close(null) }
        }
        throw LedgerError(.invalidInput, "\(name) is the store \(path) (or its lock file): what the command prints would "
            + "overwrite it; nothing was done", details: ["field": .string(name)])
    }

    /// Flushes stdout; a write that failed (a full disk, a closed pipe) is a failure, never a
    /// silent success with the output lost.
    /// - throws: `storage_error` naming the reason.
    static func flush() throws {
        if fflush(stdout) != 0 || ferror(stdout) != 0 {
            let reason = String(cString: strerror(errno))
            clearerr(stdout)
            throw LedgerError(.storage, "could not write the output to stdout: \(reason)", details: ["field": "stdout"])
        }
    }
}
