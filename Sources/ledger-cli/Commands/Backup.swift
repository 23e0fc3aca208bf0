import ActionLedger
import ArgumentParser
import Foundation

struct Backup: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an online, consistent, compacted copy of the store to DEST (mdb_env_copy2 with MDB_CP_COMPACT).",
        discussion: "Writers may keep going; the copy is one read snapshot. It is written to DEST.partial-PID, flushed, and linked as DEST only if no DEST exists by then, so DEST is never half a copy, nor another backup's.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The new file to write (must not exist).")
    var dest: String

    func execute() throws {
        try global.requireStore()
        guard !FileManagerShim.existsOrDangling(dest) else { throw LedgerError(.invalidInput, "\(dest) already exists") }
        let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
        // This process's own partial file: two backups to one DEST never share (or delete)
        // each other's copy.
        let partial = dest + ".partial-\(getpid())"
        try? FileManager.default.removeItem(atPath: partial)
        defer { unlink(partial) }  // once linked, DEST keeps the file
        try ledger.environment.copy(to: partial, compact: true)
        let copy = open(partial, O_RDONLY)
        guard copy >= 0, fsync(copy) == 0 else {
            if copy >= 0 { close(copy) }
            throw LedgerError(.storage, "cannot flush \(partial): \(String(cString: strerror(errno)))")
        }
        close(copy)
        // link(2), not rename(2): it fails when DEST exists, so a backup that finished first is kept.
        guard link(partial, dest) == 0 else {
            if errno == EEXIST { throw LedgerError(.invalidInput, "\(dest) already exists (another backup wrote it meanwhile)") }
            throw LedgerError(.storage, "cannot link \(partial) as \(dest): \(String(cString: strerror(errno)))")
        }
        FileManagerShim.syncDirectory(of: dest)
        let copied = try Ledger(path: dest, options: Ledger.Options(readOnly: true))
        let head = try copied.read { try $0.head() }
        let size = (try? FileManager.default.attributesOfItem(atPath: dest)[.size] as? Int) ?? 0
        if global.json {
            Output.json(["path": .string(dest), "events": .number(Double(head.seq)), "head_hash": .string(head.hash.hex),
                         "bytes": .number(Double(size))])
        } else {
            Human.line("backed up \(head.seq) events to \(dest) (\(size) bytes); check it with: LEDGER_DB=\(dest) ledger verify")
        }
    }
}
