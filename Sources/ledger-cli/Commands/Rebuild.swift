import ActionLedger
import ArgumentParser
import Foundation

struct Rebuild: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild projections from seq 1 into shadow databases while writers keep appending, then swap atomically.",
        discussion: """
            Resumable: run it again after an interruption and it continues from the shadow's checkpoint. \
            Only one rebuild runs at a time (an flock on PATH-rebuild.lock; a second one exits with `busy`). \
            With --verify the log is folded into memory in one read snapshot and compared with the live \
            projection; nothing is written (the file is byte-identical afterwards): exit 13 \
            (integrity_failure) and the first differing entry when they differ.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Only this projection; repeat it for several (default: all).")
    var projection: [String] = []

    @Flag(help: "Fold the log into memory and compare it with the live projection; writes nothing.")
    var verify = false

    @Option(name: .customLong("batch-size"),
            help: ArgumentHelp("Events folded per chunk at most (each chunk is also bounded by --memory-mib).",
                               discussion: "A chunk is folded in memory in a read snapshot, so commands never wait on "
                                   + "the fold; they wait only while a chunk is written, and at the end while the "
                                   + "events appended during the last chunk (at most 10 000) are folded before the swap.",
                               valueName: "n"))
    var batchSize = 4_000_000

    @Option(name: .customLong("memory-mib"), help: ArgumentHelp("Memory a chunk may hold before it is written.", valueName: "MiB"))
    var memoryMiB = 16

    func execute() throws {
        // --verify folds into memory in a read snapshot: it writes nothing, so it opens read-only.
        let ledger = try global.open(write: !verify)
        var options = RebuildOptions(verify: verify)
        options.batchSize = batchSize
        // A shift past the word would wrap (2⁴³ MiB read as 0 bytes): refused, named.
        guard memoryMiB <= Int.max >> 20 else {
            throw LedgerError(.invalidInput, "--memory-mib \(memoryMiB) is too large: at most \(Int.max >> 20)", details: ["field": "memory-mib"])
        }
        options.memoryBudget = memoryMiB << 20
        let meter = ProgressMeter(terminal: isatty(2) != 0)
        let started = ContinuousClock.now
        let results = try ledger.rebuild(projection.isEmpty ? nil : projection, options: options) { meter.report($0) }
        meter.finish()
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        let differing = results.filter { $0.difference != nil }
        if global.json {
            Output.json(["verify": .bool(verify), "seconds": .number((seconds * 1000).rounded() / 1000),
                         "events_per_second": .number(meter.rate.rounded()),
                         "projections": .array(results.map(\.json))])
        } else {
            for r in results {
                var line = "\(r.projection) v\(r.version): \(r.checkpoint) events, digest \(r.digest.hex)"
                if r.resumedFrom > 0 { line += " (resumed from \(r.resumedFrom))" }
                if r.swapped { line += ", now live (generation \(r.generation))" }
                if verify { line += r.difference == nil ? ", equal to the live projection" : ", DIFFERS" }
                print(line)
            }
        }
        for r in differing {
            if let d = r.difference {
                Output.stderr("error: projection \(r.projection) differs from its rebuild: \(d.database) key "
                    + "\(d.json["key_text"].map { $0.serialized() } ?? "") — \(d.note) [integrity_failure]")
            }
        }
        if !differing.isEmpty { throw ExitCode(LedgerError.Code.integrityFailure.exitStatus) }
    }
}

/// Rebuild progress on stderr: a bar redrawn in place on a terminal, else a plain line
/// at most every two seconds.
final class ProgressMeter {
    let terminal: Bool
    private var lastLine = ContinuousClock.now
    private var drew = false
    private(set) var rate = 0.0

    init(terminal: Bool) { self.terminal = terminal }

    func report(_ p: RebuildProgress) {
        rate = p.eventsPerSecond
        let now = ContinuousClock.now
        let done = p.head == 0 ? 1.0 : Double(min(p.checkpoint, p.head)) / Double(p.head)
        let eta = p.eta.map { "ETA \(Int($0.rounded(.up)))s" } ?? "ETA –"
        let text = "\(p.checkpoint)/\(p.head) events, \(Int(p.eventsPerSecond)) events/s, \(eta)"
        if terminal {
            let width = 30, filled = Int(done * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            Output.stderrRaw("\r\(bar) \(Int(done * 100))% \(text)\u{1B}[K")
            drew = true
        } else if now - lastLine >= .seconds(2) || p.checkpoint == p.head {
            lastLine = now
            Output.stderr("rebuild: \(Int(done * 100))% \(text)")
        }
    }

    func finish() {
        if terminal && drew { Output.stderrRaw("\n") }
    }
}
