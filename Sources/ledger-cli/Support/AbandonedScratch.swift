import ActionLedger
import Foundation

/// The scratch stores `import`, `demo` and `init` build beside their target
/// (``ScratchStore``: `.ledger-importing-PID-RANDOM`, `.ledger-building-PID-RANDOM`,
/// `.ledger-creating-PID-RANDOM`, and their `-lock` files) are removed by the run that made them; a
/// run killed before it could (kill -9, a crash, power loss) leaves them. The next run
/// removes those whose process is gone and which nothing changed for ten minutes, so repeated failures — most often on a full disk,
/// where space matters most — do not pile them up.
enum AbandonedScratch {
    /// Removes the scratch stores in `dir` named `prefix`, a PID and a random suffix (or none,
    /// as earlier builds named them) that no process has open: their PID names no process
    /// here, and no process anywhere holds the store's LMDB lock (liblmdb keeps a shared
    /// `fcntl` lock on the lock file while an environment is open, and such locks are seen
    /// across PID namespaces: a run in a container sharing the directory, whose PID means
    /// nothing here, keeps its store).
    static func remove(in dir: String, prefix: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        var stores = Set<String>()
        for name in names where name.hasPrefix(prefix) {
            var rest = name.dropFirst(prefix.count)
            if rest.hasSuffix("-lock") { rest = rest.dropLast(5) }
            // Only our own pattern: digits (then `-` and hex), a process that is gone (ESRCH),
            // never our own.
            let parts = rest.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            // Digits only (pid_t's parser takes a sign too: `+999991` is not a name a run makes).
            guard parts[0].allSatisfy({ ("0"..."9").contains($0) }),
                  parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy(\.isHexDigit)) else { continue }
            if let pid = pid_t(parts[0]), pid > 0, pid != getpid(), kill(pid, 0) == -1, errno == ESRCH { stores.insert(dir + "/" + prefix + rest) }
        }
        for store in stores {
            let lock = store + "-lock"
            // Untouched for a while too: a run in another PID namespace has its scratch file
            // closed for a moment, before LMDB opens it and between its close and its move.
            guard !Environment.isOpenElsewhere(store), untouched(store), untouched(lock) else { continue }
            // unlink(2), never a recursive removal: only the two files a run made.
            if isScratch(store) {
                unlink(store)
                if isPlainFile(lock) { unlink(lock) }
            } else if !NewFile.exists(store), isPlainFile(lock) {
                unlink(lock)  // its store was moved into place before the run could remove its lock file
            }
        }
    }

    /// How long a scratch file is left alone after its last change.
    static let quiet: TimeInterval = 600

    /// Whether `path` is absent, or last changed at least ``quiet`` ago.
    static func untouched(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return true }
        return Date().timeIntervalSince1970 - Double(info.st_mtim.tv_sec) >= quiet
    }

    /// Removes this run's own scratch store and its lock file, as plain files only (a folder
    /// of the user's bearing the name, from a PID reused in a container, is kept).
    static func removeOwn(_ store: String) {
        if isPlainFile(store) { unlink(store) }
        if isPlainFile(store + "-lock") { unlink(store + "-lock") }
    }

    /// Whether `path` can be a scratch store a run left: a plain file (not a directory or a
    /// link) that LMDB wrote, or an empty one (a run killed before LMDB wrote its first
    /// page). A file of the user's that merely bears the name is kept.
    static func isScratch(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return info.st_size == 0 || (info.st_size >= 4096 && GlobalOptions.hasLMDBMagic(path))
    }

    static func isPlainFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }
}
