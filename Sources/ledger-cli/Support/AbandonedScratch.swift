import Foundation

/// The scratch stores `import` and `demo` build beside their target (`PATH.importing-PID`,
/// `PATH.building-PID`, and their `-lock` files) are removed by the run that made them; a
/// run killed before it could (kill -9, a crash, power loss) leaves them. The next run
/// removes those whose process is gone, so repeated failures — most often on a full disk,
/// where space matters most — do not pile them up.
enum AbandonedScratch {
    /// A scratch store written to this recently is left alone even when its PID names no
    /// process here: a run in another PID namespace (a container sharing the directory)
    /// may still be building it.
    static let quiet: TimeInterval = 10 * 60

    /// Removes `path`'s scratch files of `kind` (`importing`, `building`) whose process no
    /// longer runs and that nothing has written to for ``quiet``; a live process's (another
    /// import under way) are left alone.
    static func remove(beside path: String, kind: String) {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path, prefix = url.lastPathComponent + "." + kind + "-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        var pids = Set<pid_t>()
        for name in names where name.hasPrefix(prefix) {
            var rest = name.dropFirst(prefix.count)
            if rest.hasSuffix("-lock") { rest = rest.dropLast(5) }
            // Only our own pattern: digits, a process that is gone (ESRCH), never our own.
            if let pid = pid_t(rest), pid > 0, pid != getpid(), kill(pid, 0) == -1, errno == ESRCH { pids.insert(pid) }
        }
        for pid in pids {
            let store = dir + "/" + prefix + String(pid)
            let modified = (try? FileManager.default.attributesOfItem(atPath: store))?[.modificationDate] as? Date
            if let modified, -modified.timeIntervalSinceNow < quiet { continue }
            try? FileManager.default.removeItem(atPath: store)
            try? FileManager.default.removeItem(atPath: store + "-lock")
        }
    }
}
