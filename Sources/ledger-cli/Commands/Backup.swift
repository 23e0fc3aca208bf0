import ActionLedger
import ArgumentParser
import Foundation

struct Backup: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an online, consistent, compacted copy of the store to DEST (mdb_env_copy2 with MDB_CP_COMPACT).",
        discussion: "Writers may keep going; the copy is one read snapshot. It is written to DEST.partial and renamed, so DEST is never half a copy.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The new file to write (must not exist).")
    var dest: String

    func execute() throws {
        try global.requireStore()
        guard !FileManagerShim.exists(dest) else { throw LedgerError(.invalidInput, "\(dest) already exists") }
        let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
        let partial = dest + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        try ledger.environment.copy(to: partial, compact: true)
        guard rename(partial, dest) == 0 else {
            throw LedgerError(.storage, "cannot rename \(partial) to \(dest): \(String(cString: strerror(errno)))")
        }
        let dir = (dest as NSString).deletingLastPathComponent
        let fd = open(dir.isEmpty ? "." : dir, O_RDONLY)
        if fd >= 0 { fsync(fd); close(fd) }  // make the rename durable
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

enum FileManagerShim {
    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
}
