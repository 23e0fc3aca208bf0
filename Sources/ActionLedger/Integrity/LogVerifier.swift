/// What a successful verification covered.
public struct VerifyReport: Sendable, Equatable {
    /// Events whose hash was checked in this run.
    public var checked: UInt64
    /// The first seq checked (1, or the one after a trusted checkpoint).
    public var firstSeq: UInt64
    /// The log's last seq and hash.
    public var head: LogHead
    /// Whether each event was also decoded and re-encoded, and the indexes rederived.
    public var deep: Bool

    public var json: JSON {
        ["ok": true, "events": .number(Double(head.seq)), "checked": .number(Double(checked)),
         "from_seq": .number(Double(firstSeq)), "head_hash": .string(head.hash.hex), "deep": .bool(deep)]
    }
}

/// How to verify a log.
public struct VerifyOptions: Sendable {
    /// Decode every event and require its canonical re-encoding and true content hashes, and
    /// rederive every entry of the log's indexes from the events (slower; Specs/integrity.md §3).
    public var deep = false
    /// A checkpoint the log must still extend (tail truncation and rewrites are caught).
    public var checkpoint: Checkpoint?
    /// A trusted checkpoint to start from: events up to it are not re-hashed; the stored
    /// hash at its seq must equal its head hash.
    public var start: Checkpoint?
    /// Called every ``progressInterval`` events with (last checked seq, head seq).
    public var progressInterval: UInt64 = 1 << 16

    public init(deep: Bool = false, checkpoint: Checkpoint? = nil, start: Checkpoint? = nil) {
        self.deep = deep
        self.checkpoint = checkpoint
        self.start = start
    }
}

extension Ledger {
    /// Walks the log in one read snapshot, in constant memory, checking every event with a
    /// ``ChainVerifier``, then the head record in `meta`.
    /// - throws: `integrity_failure` naming the first bad seq and what is wrong.
    public func verify(_ options: VerifyOptions = VerifyOptions(),
                       progress: ((_ seq: UInt64, _ head: UInt64) -> Void)? = nil) throws -> VerifyReport {
        try read { reader in try LogVerifier(reader: reader, options: options).run(progress) }
    }
}

/// The store side of verification: a cursor walk over the `events` database.
struct LogVerifier {
    let reader: LogReader
    let options: VerifyOptions

    func run(_ progress: ((UInt64, UInt64) -> Void)?) throws -> VerifyReport {
        let head = try reader.head()
        for cp in [options.start, options.checkpoint].compactMap({ $0 }) { try requireNotBackdated(cp) }
        var chain = ChainVerifier(deep: options.deep)
        if let start = options.start {
            chain = try startingPoint(start, options.deep)
        }
        if let cp = options.checkpoint, cp.logSize > chain.seq {
            chain.mustPass = (cp.logSize, cp.headHash)
        } else if let cp = options.checkpoint {
            try checkStoredHash(at: cp)
        }
        let first = chain.seq + 1
        // The walk starts at `first`: a record keyed below seq 1 (seq 0, a key shorter than
        // 8 bytes) would sort before it unseen. Seqs start at 1, so the first key must be one.
        try reader.txn.scan(reader.dbs.events, from: nil) { k, _ in
            guard k.count == 8 else { throw ChainVerifier.failure(1, "bad_key", "an event key of \(k.count) bytes sorts before seq 1") }
            guard Keys.readU64(k) >= 1 else { throw ChainVerifier.failure(1, "bad_key", "an event is keyed seq 0; seqs start at 1") }
            return false
        }
        let interval = max(options.progressInterval, 1)
        let pipeline = HashCheckPipeline(deep: options.deep)
        do {
            try reader.txn.scan(reader.dbs.events, from: Keys.u64(first)) { k, v in
                guard k.count == 8 else {
                    throw ChainVerifier.failure(chain.seq + 1, "bad_key", "seq \(chain.seq + 1): an event key of \(k.count) bytes")
                }
                let key = Keys.readU64(k)
                guard v.count >= 32 else {
                    throw ChainVerifier.failure(key, "truncated", "seq \(key): stored value of \(v.count) bytes, shorter than its hash")
                }
                let stored = Digest(bytes: UnsafeRawBufferPointer(rebasing: v[0..<32]))!
                let bytes = UnsafeRawBufferPointer(rebasing: v[32...])
                let previous = chain.hash
                try chain.advance(key: key, storedHash: stored, bytes: bytes)
                pipeline.add(.init(seq: key, previous: previous, stored: stored, bytes: bytes))
                if key % interval == 0 {
                    if pipeline.hasFailed { return false }
                    progress?(key, head.seq)
                }
                return true
            }
        } catch {
            // Wait for the workers before the snapshot closes; a hash failure at a smaller
            // seq wins over this one.
            try pipeline.finish(walkError: error)
        }
        try pipeline.finish()
        try chain.finish(head: head)
        // The indexes are checked once the events they derive from are proven.
        if options.deep { try IndexVerifier(reader: reader).run() }
        progress?(chain.seq, head.seq)
        return VerifyReport(checked: chain.seq + 1 - first, firstSeq: first, head: head, deep: options.deep)
    }

    /// The position after a trusted checkpoint, once the stored hash at it matches.
    private func startingPoint(_ cp: Checkpoint, _ deep: Bool) throws -> ChainVerifier {
        guard cp.logSize > 0 else { return ChainVerifier(deep: deep) }
        try checkStoredHash(at: cp)
        return ChainVerifier(from: LogHead(seq: cp.logSize, hash: cp.headHash), deep: deep)
    }

    /// Requires the hash stored with event `cp.logSize` to be the checkpoint's head hash.
    private func checkStoredHash(at cp: Checkpoint) throws {
        guard cp.logSize > 0 else { return }
        let stored = try reader.withRawEvent(cp.logSize) { v in
            v.count >= 32 ? Digest(bytes: UnsafeRawBufferPointer(rebasing: v[0..<32])) : nil
        } ?? nil
        guard let stored else {
            throw ChainVerifier.failure(cp.logSize, "truncated_tail", "seq \(cp.logSize) is missing: "
                + "the checkpoint covers \(cp.logSize) events (tail truncated or rewritten)")
        }
        guard stored == cp.headHash else {
            throw ChainVerifier.failure(cp.logSize, "checkpoint_mismatch", "seq \(cp.logSize): the log does not extend "
                + "the checkpoint: its hash is \(stored.hex), the checkpoint says \(cp.headHash.hex)")
        }
    }

    /// A checkpoint signs a head that existed when it was made: one dated before the event
    /// it covers was backdated.
    private func requireNotBackdated(_ cp: Checkpoint) throws {
        guard cp.logSize > 0, let event = try reader.event(cp.logSize)?.event else { return }
        try Checkpoint.requireNotBackdated(cp.time, event)
    }
}
