extension Ledger {
    /// Restores an export into this ledger, which must be empty (`ledger import`).
    ///
    /// The whole file is parsed and its chain checked first; only then are the events
    /// appended verbatim, in one transaction, all or nothing. Nothing is written when any
    /// line is refused. Memory grows with the export (the events are held until commit).
    /// - throws: `not_empty` when the ledger has events; `invalid_input` naming the line
    ///   and field for a bad line or a broken chain (`details.line`, `details.field`).
    /// - returns: the head after the import.
    @discardableResult
    public func importJSONL(path: String) throws -> LogHead {
        try requireEmpty()
        var verifier = ExportVerifier()
        var events: [(event: Event, hash: Digest?)] = []
        try LineReader.forEachLine(path: path) { line in
            do {
                let stored = try verifier.next(line)
                events.append((stored.event, stored.hash))
            } catch let e as LedgerError where e.code == .integrityFailure {
                // A broken chain in input is bad input: name the line and the field at fault.
                var details = e.details
                let field = e.details["problem"] == "hash_mismatch" ? "hash" : "seq"
                details["field"] = .string(field)
                throw LedgerError(.invalidInput, "\(e.message) (field '\(field)')", details: details)
            }
        }
        try requireEmpty()
        try append(verbatim: events)
        return try read { try $0.head() }
    }

    private func requireEmpty() throws {
        let head = try read { try $0.head() }
        guard head.seq == 0 else {
            throw LedgerError(.notEmpty, "the ledger already holds \(head.seq) events; import restores into an empty store only",
                              details: ["events": .number(Double(head.seq))])
        }
    }
}
