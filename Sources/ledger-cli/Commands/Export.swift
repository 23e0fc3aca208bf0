import ActionLedger
import ArgumentParser
import Foundation

struct Export: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every event as JSON Lines (each line the event's JSON with its \"hash\"), in seq order.",
        discussion: "From one read snapshot, streamed. With --out, FILE must not exist: the export is written to FILE.partial-PID (owner-only), flushed, and linked as FILE, so FILE is never half an export and never replaces another file. Check an export with `ledger verify --export FILE`; restore it with `ledger import`.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "Write to this new file (it must not exist) instead of stdout.")
    var out: String?

    func execute() throws {
        try global.requireStore()
        // Refused before anything is opened: an existing FILE (the store itself, its lock,
        // a symlink planted anywhere) is never truncated by an export.
        if let out, FileManagerShim.existsOrDangling(out) { throw LedgerError(.invalidInput, "\(out) already exists") }
        let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
        guard let out else {
            _ = try ledger.exportJSONL { try Self.writeAll(1, $0) }
            return
        }
        let partial = out + ".partial-\(getpid())"
        // O_EXCL|O_NOFOLLOW: a partial name someone planted (a symlink included) is refused, not followed.
        let fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LedgerError(.invalidInput, "cannot create \(partial): \(String(cString: strerror(errno)))") }
        var linked = false
        defer { close(fd); if !linked { unlink(partial) } }
        let count = try ledger.exportJSONL { try Self.writeAll(fd, $0) }
        guard fsync(fd) == 0 else { throw LedgerError(.storage, "cannot flush \(partial): \(String(cString: strerror(errno)))") }
        // link(2), not rename(2): it fails when FILE appeared meanwhile, which is then kept.
        guard link(partial, out) == 0 else {
            if errno == EEXIST { throw LedgerError(.invalidInput, "\(out) already exists (written meanwhile)") }
            throw LedgerError(.storage, "cannot link \(partial) as \(out): \(String(cString: strerror(errno)))")
        }
        linked = true
        unlink(partial)
        FileManagerShim.syncDirectory(of: out)
        if global.json { Output.json(["path": .string(out), "events": .number(Double(count))]) }
        else { Human.line("exported \(count) events to \(out)") }
    }

    private static func writeAll(_ fd: Int32, _ chunk: [UInt8]) throws {
        var done = 0
        while done < chunk.count {
            let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw LedgerError(.storage, "cannot write the export: \(String(cString: strerror(errno)))") }
            done += n
        }
    }
}
