import ActionLedger
import ArgumentParser
import Foundation

struct Export: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every event as JSON Lines (each line the event's JSON with its \"hash\"), in seq order.",
        discussion: "From one read snapshot, streamed. Check an export with `ledger verify --export FILE`; restore it with `ledger import`.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "Write to this file instead of stdout.")
    var out: String?

    func execute() throws {
        try global.requireStore()
        let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
        var fd: Int32 = 1
        if let out {
            fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else { throw LedgerError(.invalidInput, "cannot create \(out): \(String(cString: strerror(errno)))") }
        }
        defer { if fd != 1 { close(fd) } }
        let count = try ledger.exportJSONL { chunk in
            var done = 0
            while done < chunk.count {
                let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw LedgerError(.storage, "cannot write the export: \(String(cString: strerror(errno)))") }
                done += n
            }
        }
        if let out {
            fsync(fd)
            if global.json { Output.json(["path": .string(out), "events": .number(Double(count))]) }
            else { Human.line("exported \(count) events to \(out)") }
        }
    }
}
