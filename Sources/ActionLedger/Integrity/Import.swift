extension Ledger {
    /// Restores an export into this ledger, which must be empty (`ledger import`).
    ///
    /// The whole file is parsed and its chain and content hashes checked first; then the
    /// events are appended verbatim and every one is judged by ``DecisionReplay`` — the
    /// policy code the live commands use — in the same write transaction, all or nothing.
    /// Nothing is written when any line is refused. Memory grows with the export (the
    /// events are held until commit).
    ///
    /// The chain is unkeyed: anyone can recompute it, so an import proves nothing about
    /// where the file came from. With `checkpoint` (a signed checkpoint whose signature the
    /// caller has checked) the import is accepted only if the file extends it.
    /// - throws: `not_empty` when the ledger has events; `invalid_input` naming the line
    ///   and field for a bad line or a broken chain (`details.line`, `details.field`);
    ///   `replay_mismatch` naming the line, seq and rule of an event the engine could not
    ///   have appended; `integrity_failure` when the file does not extend `checkpoint`.
    /// - returns: the head after the import.
    @discardableResult
    public func importJSONL(path: String, checkpoint: Checkpoint? = nil) throws -> LogHead {
        try requireEmpty()
        var verifier = ExportVerifier()
        var events: [(event: Event, hash: Digest)] = []
        var lines: [Int] = []
        try LineReader.forEachLine(path: path) { line in
            do {
                let stored = try verifier.next(line)
                events.append((stored.event, stored.hash))
                lines.append(verifier.line)
            } catch let e as LedgerError where e.code == .integrityFailure {
                // A broken chain or a false content hash in input is bad input: name the line and field.
                var details = e.details
                let field: String
                if case .string(let f)? = e.details["field"] { field = f } else {
                    field = e.details["problem"] == "hash_mismatch" ? "hash" : "seq"
                }
                details["field"] = .string(field)
                throw LedgerError(.invalidInput, "\(e.message) (field '\(field)')", details: details)
            }
        }
        // An empty file would make a store with no events, not even the `store.created` that
        // says how a store was made: nothing to restore.
        guard !events.isEmpty else {
            throw LedgerError(.invalidInput, "the export holds no events; nothing to import", details: ["line": .number(1)])
        }
        if let checkpoint { try Self.requireExtends(checkpoint, events) }
        try requireEmpty()
        try perform { session in
            for (i, (event, hash)) in events.enumerated() {
                do {
                    try session.appendVerbatim(event, expectedHash: hash)
                    try session.indexVerbatimCommand(event.commandId, seq: event.seq)
                } catch let e as LedgerError where e.details["line"] == nil {
                    // Name the file's line, as every other refusal of an import does.
                    var details = e.details
                    details["line"] = .number(Double(lines[i]))
                    throw LedgerError(e.code, "line \(lines[i]): \(e.message)", details: details)
                }
            }
            // Judged after the indexes hold the whole file, as `audit replay` judges a store.
            let report = try DecisionReplay.run(session.reader)
            if let m = report.mismatch {
                let line = m.seq >= 1 && Int(m.seq) <= lines.count ? lines[Int(m.seq) - 1] : 0
                throw LedgerError(.replayMismatch, "line \(line): seq \(m.seq) is not an event the engine could have appended "
                    + "(rule \(m.rule)\(m.code.map { ", refused as \($0)" } ?? "")): \(m.message)",
                    details: ["line": .number(Double(line)), "seq": .number(Double(m.seq)), "rule": .string(m.rule),
                              "refusal": m.code.map(JSON.string) ?? .null])
            }
        }
        return try read { try $0.head() }
    }

    /// The file must reach the checkpoint's size with the checkpoint's head hash there.
    static func requireExtends(_ cp: Checkpoint, _ events: [(event: Event, hash: Digest)]) throws {
        guard cp.logSize <= UInt64(events.count) else {
            throw LedgerError(.integrityFailure, "the export holds \(events.count) events, fewer than the checkpoint's "
                + "\(cp.logSize): it does not extend the checkpoint", details: ["problem": "truncated"])
        }
        guard cp.logSize == 0 || events[Int(cp.logSize) - 1].hash == cp.headHash else {
            throw LedgerError(.integrityFailure, "the export's hash at seq \(cp.logSize) is not the checkpoint's: "
                + "it was rewritten", details: ["problem": "diverged", "seq": .number(Double(cp.logSize))])
        }
        if cp.logSize > 0 { try Checkpoint.requireNotBackdated(cp.time, events[Int(cp.logSize) - 1].event) }
    }

    private func requireEmpty() throws {
        let head = try read { try $0.head() }
        guard head.seq == 0 else {
            throw LedgerError(.notEmpty, "the ledger already holds \(head.seq) events; import restores into an empty store only",
                              details: ["events": .number(Double(head.seq))])
        }
    }
}
