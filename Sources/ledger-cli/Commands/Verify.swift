import ActionLedger
import ArgumentParser
import Foundation

struct Verify: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the hash chain, dense seqs and head record; on failure name the first bad seq.",
        discussion: """
            Streams the log in one read snapshot (constant memory). With --checkpoint and --pubkey, also \
            proves the log still extends a signed checkpoint kept outside the store: that is the only way a \
            truncated tail is caught. --export verifies a JSONL export with no LMDB environment at all.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "A signed checkpoint (from `ledger checkpoint`) the log must still extend.")
    var checkpoint: String?

    @Option(name: .customLong("from-checkpoint"), help: "Trust this signed checkpoint and verify only the events after it.")
    var fromCheckpoint: String?

    @Option(help: "The public key (PREFIX.pub) the checkpoints must be signed with.")
    var pubkey: String?

    @Option(help: "Verify this export (JSONL) instead of the store; no LMDB environment is opened.")
    var export: String?

    @Flag(help: "Also decode every event and require its canonical re-encoding (slower).")
    var deep = false

    /// Set in the child `verify` runs the store's scan in (``scanInChild()``).
    static let childVariable = "LEDGER_VERIFY_CHILD"

    func execute() throws {
        // A key given with nothing to check against it would read as a proof that was never made.
        if pubkey != nil, checkpoint == nil, fromCheckpoint == nil {
            throw LedgerError(.invalidInput, "--pubkey checks the signature of --checkpoint or --from-checkpoint: give one of them",
                              details: ["field": "pubkey"])
        }
        if export == nil, ProcessInfo.processInfo.environment[Self.childVariable] == nil {
            try global.requireStore()
            return try scanInChild()
        }
        let key = try pubkey.map { try CheckpointPublicKey(json: JSONParser.parse(Output.read($0))) }
        func load(_ path: String?, _ option: String) throws -> Checkpoint? {
            guard let path else { return nil }
            guard let key else { throw LedgerError(.invalidInput, "\(option) needs --pubkey PREFIX.pub to check its signature") }
            let cp = try Checkpoint(json: JSONParser.parse(Output.read(path)))
            try cp.verifySignature(with: key)
            return cp
        }
        let cp = try load(checkpoint, "--checkpoint")
        let start = try load(fromCheckpoint, "--from-checkpoint")
        let progress = Progress()
        let report: VerifyReport
        var proofs: Int?
        var projections: [String]?
        var ahead: (at: Timestamp, ms: Int64)?
        if let export {
            guard start == nil else { throw LedgerError(.invalidInput, "--from-checkpoint does not apply to --export") }
            report = try ExportVerifier.verify(path: export, checkpoint: cp) { progress.show($0, nil) }
        } else {
            try global.requireStore()
            // Verification never writes: always MDB_RDONLY, whatever --read-only says.
            let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
            try global.requireClock(ledger)
            report = try ledger.verify(VerifyOptions(deep: deep, checkpoint: cp, start: start)) { progress.show($0, $1) }
            // Deep: every device proof and key introduction against the key in force (statements.md §4),
            // and every projection against a refold of the log, as `rebuild --verify` compares
            // them (in memory, writing nothing): the audit listings an auditor reads are checked too.
            if deep {
                proofs = try ledger.verifyProofs()
                // Deep means compared: a store that needs `ledger migrate` (its layout marker, outside
                // the chain, may also have been set back by hand) cannot be, and is never called ok.
                if let reason = ledger.migrationNeeded {
                    throw LedgerError(.migrationRequired, "the log verifies (\(report.head.seq) events), but --deep cannot compare "
                        + "the projections and index records of this store (\(reason)): "
                        + (ledger.writtenByNewerBuild ? "verify it with that build"
                            : "run `ledger migrate --db \(global.path)` (it verifies the chain first), then `ledger verify --deep`"))
                }
                projections = try Self.compareProjections(ledger)
            }
            ahead = try Self.headDatedAhead(ledger, path: global.path)
        }
        progress.clear()
        if global.json {
            var o = report.json
            if case .object(var obj) = o {
                if let cp { obj["checkpoint"] = ["log_size": .number(Double(cp.logSize)), "key_id": .string(cp.keyId)] }
                if let projections { obj["projections_equal"] = .array(projections.map(JSON.string)) }
                if let ahead { obj["head_dated_ahead_ms"] = .number(Double(ahead.ms)) }
                o = .object(obj)
            }
            Output.json(o)
        } else {
            var text = "ok: \(report.head.seq) events, chain intact (checked \(report.checked) from seq \(report.firstSeq)); "
                + "head \(report.head.hash.hex)"
            if let cp { text += "; extends checkpoint at \(cp.logSize) signed by \(cp.keyId)" }
            if let proofs { text += "; \(proofs) device proofs verified" }
            if let projections { text += "; projections equal to a refold of the log (\(projections.joined(separator: ", ")))" }
            Human.line(text)
        }
        if let ahead {
            Output.stderr("warning: the log's last event is dated \(ahead.at.iso8601), \(ahead.ms) ms ahead of this clock: a "
                + "clock running ahead dated it, or this one is behind; writes are refused (clock_behind) until this clock "
                + "reaches \(TimeRules.writableAt(head: ahead.at).iso8601) (Specs/cli.md, clock)")
        }
    }

    /// The log's last event's time and how far it is ahead of the engine's clock, when more
    /// than the tolerance (writes are then refused): the chain is intact, yet the store takes
    /// no writes, and an auditor's windows ending now leave that event out. Nil otherwise,
    /// or when no clock can be read here (`LEDGER_NOW` beside a production store).
    static func headDatedAhead(_ ledger: Ledger, path: String) throws -> (at: Timestamp, ms: Int64)? {
        let testClock = try ledger.creation()?.testClock ?? false
        guard let now = try? Clock.now(testClock: testClock, path: path),
              let at = try ledger.read({ r in try r.event(try r.head().seq)?.event.at }) else { return nil }
        let ms = at.milliseconds(since: now)
        return ms > TimeRules.tolerance ? (at, ms) : nil
    }

    /// Each projection against a refold of the log; returns their names when all are equal.
    /// - throws: `integrity_failure` (`problem: projection_mismatch`) naming the first that differs.
    static func compareProjections(_ ledger: Ledger) throws -> [String] {
        let results: [RebuildResult]
        do {
            results = try ledger.rebuild(options: RebuildOptions(verify: true))
        } catch let e as LedgerError where e.code == .projectionStale {
            // The stored state cannot even take the log's tail (a feed entry it needs is gone):
            // damage to the projection, reported as every other difference is.
            guard case .string(let name)? = e.details["projection"] else { throw e }
            throw LedgerError(.integrityFailure, "projection \(name) differs from the log: \(e.message); `ledger rebuild "
                + "--projection \(name)` rebuilds it from the log", details: ["problem": "projection_mismatch", "projection": .string(name)])
        }
        if let r = results.first(where: { $0.difference != nil }), let d = r.difference {
            throw LedgerError(.integrityFailure, "projection \(r.projection) differs from a refold of the log: \(d.database) key "
                + "\(d.json["key_text"].map { $0.serialized() } ?? "") — \(d.note); `ledger rebuild --projection \(r.projection)` "
                + "rebuilds it from the log", details: ["problem": "projection_mismatch", "projection": .string(r.projection),
                                                         "database": .string(d.database)])
        }
        return results.map(\.projection)
    }
}

/// Progress on stderr, only when stderr is a terminal.
final class Progress {
    private let enabled = isatty(2) != 0
    private var shown = false

    func show(_ seq: UInt64, _ total: UInt64?) {
        guard enabled else { return }
        let text = total.map { "verified \(seq) / \($0)" } ?? "verified \(seq)"
        Output.stderrRaw(("\r" + text))
        shown = true
    }

    func clear() {
        if shown { Output.stderrRaw("\r\u{1B}[K") }
    }
}

extension Verify {
    /// Runs this same `verify` in a child process and passes on its output and status.
    ///
    /// liblmdb checks no page: a damaged B-tree page (a flipped byte in a branch or leaf
    /// header) can send it past the map and fault the process. The tool meant to find such
    /// damage must report it, so the scan runs in a child; a child killed by a signal is
    /// reported as `integrity_failure` (`problem: unreadable_page`) with its exit status.
    func scanInChild() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = Array(CommandLine.arguments.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = "1"
        environment["SWIFT_BACKTRACE"] = "enable=no"  // a fault is reported below, not as a crash dump
        child.environment = environment
        try child.run()
        child.waitUntilExit()
        guard child.terminationReason == .uncaughtSignal else {
            if child.terminationStatus != 0 { throw ExitCode(child.terminationStatus) }
            return
        }
        // SIGILL, SIGTRAP: a Swift trap, not a fault — a record this build's code could not
        // handle; said apart, so no one restores a backup over a bug of the verifier's.
        if [SIGILL, SIGTRAP].contains(child.terminationStatus) {
            throw Output.fail(LedgerError(.integrityFailure, "\(global.path): verify stopped on a record it could not handle "
                + "(signal \(child.terminationStatus), a trap in its own code, not a fault reading the file): the store holds "
                + "something no build writes, or verify has a defect; `LEDGER_VERIFY_CHILD=1 ledger verify` shows where",
                details: ["problem": "verifier_trapped", "signal": .number(Double(child.terminationStatus))]), json: global.json)
        }
        throw Output.fail(LedgerError(.integrityFailure, "\(global.path) is damaged: reading it faulted (signal "
            + "\(child.terminationStatus)), a page of its B-trees is not what LMDB wrote",
            details: ["problem": "unreadable_page", "signal": .number(Double(child.terminationStatus))]), json: global.json)
    }
}
