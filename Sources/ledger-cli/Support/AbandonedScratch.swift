import Foundation

/// The scratch stores `import` and `demo` build beside their target (`PATH.importing-PID`,
/// `PATH.building-PID`, and their `-lock` files) are removed by the run that made them; a
/// run killed before it could (kill -9, a crash, power loss) leaves them. The next run
/// removes those whose process is gone, so repeated failures — most often on a full disk,
/// where space matters most — do not pile them up.
enum AbandonedScratch {
    /// Removes `path`'s scratch files of `kind` (`importing`, `building`) whose process no
    /// longer runs; a live process's (another import under way) are left alone.
    static func remove(beside path: String, kind: String) {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path, prefix = url.lastPathComponent + "." + kind + "-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for name in names where name.hasPrefix(prefix) {
            var rest = name.dropFirst(prefix.count)
            if rest.hasSuffix("-lock") { rest = rest.dropLast(5) }
            // Only our own pattern: digits, a process that is gone (ESRCH), never our own.
            guard let pid = pid_t(rest), pid > 0, pid != getpid(), kill(pid, 0) == -1, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: dir + "/" + name)
        }
    }
}
