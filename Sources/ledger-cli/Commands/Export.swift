import ActionLedger
import ArgumentParser
import Foundation

struct Export: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every event as JSON Lines (each line the event's JSON with its \"hash\"), in seq order.",
        discussion: "From one read snapshot, streamed. With --out, FILE must not exist: the export is written unnamed (or, where the file system cannot, as FILE.partial-PID), owner-only, flushed, and only then named FILE, so FILE is never half an export and never replaces another file. Check an export with `ledger verify --export FILE`; restore it with `ledger import`.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "Write to this new file (it must not exist) instead of stdout.")
    var out: String?

    func execute() throws {
        try global.requireStore()
        // DEST is checked (and made, unnamed) before anything is opened: an existing FILE (the
        // store itself, its lock, a planted symlink) is never truncated by an export.
        let file = try out.map { try NewFile($0) }
        let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
        try global.requireClock(ledger)
        let count = try ledger.exportJSONL { try NewFile.writeAll(file?.fd ?? 1, $0, "the export") }
        guard let file, let out else { return }
        try file.commit()
        if global.json { Output.json(["path": .string(out), "events": .number(Double(count))]) }
        else { Human.line("exported \(count) events to \(out)") }
    }
}
