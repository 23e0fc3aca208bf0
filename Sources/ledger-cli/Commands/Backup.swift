import ActionLedger
import ArgumentParser
import Foundation

struct Backup: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an online, consistent, compacted copy of the store to DEST (mdb_env_copy2 with MDB_CP_COMPACT).",
        discussion: "Writers may keep going; the copy is one read snapshot. It is written unnamed (or, where the file system cannot, as DEST.partial-PID), owner-only, flushed, and named DEST only if no DEST exists by then, so DEST is never half a copy, nor another backup's, and a killed backup leaves nothing.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The new file to write (must not exist).")
    var dest: String

    func execute() throws {
        try global.requireStore()
        // DEST is checked (and made, unnamed) first; it is named only once the copy is whole.
        // A DEST-lock already there (a leftover, or a symlink planted for whoever opens the
        // copy) is refused as DEST is: LMDB would open it, following the link.
        if NewFile.exists(dest + "-lock") { throw LedgerError(.invalidInput, "\(dest)-lock already exists") }
        let file = try NewFile(dest)
        let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
        try global.requireClock(ledger)
        try ledger.environment.copy(toDescriptor: file.fd, compact: true)
        try file.commit()
        // Read back without a lock file: none is made beside DEST (a symlink planted at
        // DEST-lock is never followed), and nobody writes the new copy yet.
        var readBack = Ledger.Options(readOnly: true)
        readBack.environment.withoutLockFile = true
        let copied = try Ledger(path: dest, options: readBack)
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
