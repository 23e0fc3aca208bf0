import ActionLedger
import ArgumentParser
import Foundation

struct Log: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Print events as JSON Lines from a seq (each with its chain hash), for catching up.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "First seq to print.")
    var from: UInt64 = 1

    @Flag(help: "Keep waiting for new events (polls every 200 ms).")
    var follow = false

    @Option(help: "Print at most this many events.")
    var limit: Int?

    func execute() throws {
        let ledger = try global.open(write: false)
        var next = max(from, 1)
        var printed = 0
        while true {
            // Bounded reads: a long-lived read transaction would pin old pages for writers.
            // No more than the limit still wants; what was read before a failure (damage at a
            // seq) is printed before it is reported.
            let wanted = min(1000, max(1, (limit ?? 1000) - printed))
            var failure: (any Error)?
            let chunk = try ledger.read { r -> [StoredEvent] in
                var out: [StoredEvent] = []
                do {
                    try r.forEach(from: next) { e in
                        out.append(e)
                        return out.count < wanted
                    }
                } catch { failure = error }
                return out
            }
            for e in chunk {
                if let limit, printed >= limit { return }
                Output.line(e.json)
                printed += 1
                next = e.seq + 1
            }
            // A follower that cannot write stops with storage_error, never silently dropping events.
            try StandardStreams.flush()
            if let limit, printed >= limit { return }
            if let failure { throw failure }
            if chunk.count == wanted { continue }
            guard follow else { return }
            usleep(200_000)
        }
    }
}
