import Foundation

/// File checks the commands that write a new file (backup, export) share.
enum FileManagerShim {
    /// Whether anything is at `path`: a file, a directory, or a symlink, dangling or not
    /// (`lstat`, so a planted symlink counts as taken rather than being followed).
    static func existsOrDangling(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Flushes the directory holding `path`, so a new name linked into it survives a crash.
    static func syncDirectory(of path: String) {
        let dir = (path as NSString).deletingLastPathComponent
        let fd = open(dir.isEmpty ? "." : dir, O_RDONLY)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}
