import Foundation

/// The export format (`ledger export`): JSON Lines, one event per line in seq order, each
/// line the compact JSON of ``StoredEvent/json`` (the event's JSON form plus `"hash"`)
/// followed by LF. Specs/integrity.md, "Export", says how to verify it independently.
extension Ledger {
    /// Streams every event as one JSONL line, from one read snapshot, handing `write`
    /// chunks of about 1 MiB. Returns the number of events written.
    @discardableResult
    public func exportJSONL(_ write: ([UInt8]) throws -> Void) throws -> UInt64 {
        try read { reader in
            var buffer: [UInt8] = []
            buffer.reserveCapacity(1 << 20 + 4096)
            var count: UInt64 = 0
            try reader.forEach { stored in
                buffer.append(contentsOf: stored.json.serialized().utf8)
                buffer.append(0x0A)
                count += 1
                if buffer.count >= 1 << 20 {
                    try write(buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
                return true
            }
            if !buffer.isEmpty { try write(buffer) }
            return count
        }
    }
}

/// Reads an export line by line and checks it with a ``ChainVerifier``, in constant
/// memory: no LMDB environment is involved.
public struct ExportVerifier {
    public private(set) var chain: ChainVerifier
    /// The current line number (1-based).
    public private(set) var line = 0
    /// The deepest nesting of a line: a document's (``JSONParser/maxDepth``, an outcome's),
    /// two levels down (the line's object, its `data`). A line held to 32 had refused the
    /// export of an outcome the engine took at 31 or 32.
    static let lineDepth = JSONParser.maxDepth + 2
    /// Device keys and proofs, as `verify --deep` checks them (Specs/statements.md §4½).
    private var proofs = ProofScan()
    /// The checkpoint's size and time: it may not be dated before the event it covers.
    private let checkpointTime: (seq: UInt64, time: Timestamp)?

    public init(checkpoint: Checkpoint? = nil) {
        chain = ChainVerifier()
        checkpointTime = checkpoint.flatMap { $0.logSize > 0 ? ($0.logSize, $0.time) : nil }
        if let checkpoint, checkpoint.logSize > 0 { chain.mustPass = (checkpoint.logSize, checkpoint.headHash) }
    }

    /// Parses and checks one line (without its LF); returns the event it holds.
    /// - throws: `invalid_input` for a line that is not a valid event, `integrity_failure`
    ///   when the chain breaks or a recorded content hash is not its preview's (`problem`
    ///   and `field` `content_hash`) or a device proof does not verify (`problem`); all name
    ///   the line (`details.line`).
    public mutating func next(_ bytes: some Collection<UInt8>) throws -> StoredEvent {
        line += 1
        do {
            guard !bytes.isEmpty else { throw LedgerError(.invalidInput, "empty line") }
            // The outcome an engine records is a document of up to 32 levels; its line wraps it in two more.
            let json = try JSONParser.parse(bytes, depthLimit: Self.lineDepth)
            let event = try Event(json: json)
            guard case .string(let h)? = json["hash"] else {
                throw LedgerError(.invalidInput, "field 'hash': is required (64 hex digits)", details: ["field": "hash"])
            }
            guard let hash = Digest(hex: h), hash.hex == h else {
                throw LedgerError(.invalidInput, "field 'hash': expected 64 lowercase hex digits", details: ["field": "hash"])
            }
            let encoded = EventCodec.encode(event)
            try encoded.withUnsafeBytes { try chain.next(key: event.seq, storedHash: hash, bytes: $0) }
            // The chain covers what the line says, not whether its content hash is true.
            try ChainVerifier.checkContentHash(event.seq, event)
            if let cp = checkpointTime, cp.seq == event.seq { try Checkpoint.requireNotBackdated(cp.time, event) }
            // A re-chained forgery keeps a valid chain; a forged proof still fails here.
            let stored = StoredEvent(event: event, hash: hash)
            try proofs.check(stored)
            return stored
        } catch let e as LedgerError {
            var details = e.details
            details["line"] = .number(Double(line))
            throw LedgerError(e.code, "line \(line): \(e.message)", details: details)
        }
    }

    /// Checks the end of the export (a checkpoint it must reach). An export without events is
    /// refused as `import` refuses it: every store begins with `store.created`, so an empty
    /// file is no export (most often what a failed or killed one left), never "ok, 0 events".
    public func finish() throws {
        guard chain.seq > 0 else {
            throw LedgerError(.invalidInput, "the export holds no events (every export begins with store.created)",
                              details: ["line": .number(1)])
        }
        try chain.finish(head: nil)
    }

    /// Verifies a whole export file (`-` for stdin) without any LMDB environment.
    public static func verify(path: String, checkpoint: Checkpoint? = nil,
                              progress: ((UInt64) -> Void)? = nil) throws -> VerifyReport {
        var v = ExportVerifier(checkpoint: checkpoint)
        try LineReader.forEachLine(path: path) { line in
            let stored = try v.next(line)
            if let progress, stored.seq % (1 << 16) == 0 { progress(stored.seq) }
        }
        try v.finish()
        return VerifyReport(checked: v.chain.seq, firstSeq: 1, head: LogHead(seq: v.chain.seq, hash: v.chain.hash), deep: true)
    }
}

/// Splits a file into LF-terminated lines, reading 1 MiB at a time. A last line without
/// LF is still a line (its JSON must then be complete); CR is not stripped.
public enum LineReader {
    /// Longest line accepted: a JSON document's size limit plus slack.
    public static let maxLine = JSONParser.maxBytes + 1

    public static func forEachLine(path: String, _ body: (ArraySlice<UInt8>) throws -> Void) throws {
        let fd = path == "-" ? 0 : open(path, O_RDONLY)
        guard fd >= 0 else { throw LedgerError(.invalidInput, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var lineNo = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LedgerError(.invalidInput, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            pending.append(contentsOf: chunk[0..<n])
            var start = pending.startIndex
            while let nl = pending[start...].firstIndex(of: 0x0A) {
                lineNo += 1
                try body(pending[start..<nl])
                start = nl + 1
            }
            pending.removeSubrange(..<start)
            guard pending.count <= maxLine else {
                throw LedgerError(.invalidInput, "line \(lineNo + 1): longer than \(maxLine) bytes",
                                  details: ["line": .number(Double(lineNo + 1))])
            }
        }
        if !pending.isEmpty { try body(pending[...]) }
    }
}
