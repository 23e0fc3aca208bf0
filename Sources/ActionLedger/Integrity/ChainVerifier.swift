/// Checks a stream of stored events, one at a time, in constant memory: the state is the
/// last verified seq and hash, nothing else. Both the LMDB walk (``LogVerifier``) and the
/// export walk (``ExportVerifier``) feed it, so a store and its export are judged by the
/// same rules (Specs/integrity.md, "Verification").
///
/// For each event it checks, in this order: the key is the next seq (dense from 1); the
/// value holds a 32-byte hash and at least the fixed header; the seq inside the canonical
/// bytes equals the key; the format byte is known; SHA-256(previous hash ‖ bytes) equals
/// the stored hash; and, with ``deep``, that the bytes decode and re-encode to themselves
/// and that a recorded content hash is the hash of the recorded preview.
/// The first failure throws `integrity_failure` naming that seq.
public struct ChainVerifier: Sendable {
    /// The last verified event's seq (0 before the first).
    public private(set) var seq: UInt64
    /// The last verified event's chain hash (``Digest/zero`` before the first).
    public private(set) var hash: Digest
    /// Also decode each event and require the canonical re-encoding to be identical.
    public let deep: Bool
    /// A signed checkpoint the walk must pass through: at its `logSize` the hash must equal
    /// its `headHash`. Set from a trusted ``Checkpoint``.
    public var mustPass: (seq: UInt64, hash: Digest)?

    /// Starts at the empty log, or after a trusted position (`from`) whose events are not
    /// re-read.
    public init(from start: LogHead = .empty, deep: Bool = false) {
        seq = start.seq
        hash = start.hash
        self.deep = deep
    }

    /// Smallest canonical event: format, type, version, seq (8), at (8), then at least
    /// five one-byte fields.
    static let minimumEventBytes = 3 + 8 + 8

    /// Verifies the next stored event: `key` is its LMDB key (or the export line's seq),
    /// `storedHash` the hash recorded with it, `bytes` its canonical bytes.
    @inline(__always)
    public mutating func next(key: UInt64, storedHash: Digest, bytes: UnsafeRawBufferPointer) throws {
        let previous = hash
        try advance(key: key, storedHash: storedHash, bytes: bytes)
        try Self.checkHash(key, previous: previous, stored: storedHash, bytes: bytes, deep: deep)
    }

    /// Every check of ``next(key:storedHash:bytes:)`` except the hash and deep decoding,
    /// which depend only on this event and the previous stored hash, so that
    /// ``LogVerifier`` can run them on other threads. Moves on trusting `storedHash`: the
    /// chain holds when every event's hash check passes, by induction from the zero hash.
    @inline(__always)
    mutating func advance(key: UInt64, storedHash: Digest, bytes: UnsafeRawBufferPointer) throws {
        let expected = seq &+ 1
        guard key == expected else {
            if key > expected {
                throw Self.failure(expected, "missing", "seq \(expected) is missing: the next stored event is seq \(key)")
            }
            throw Self.failure(expected, "out_of_order",
                               "seq \(expected) expected, found seq \(key) again or out of order")
        }
        guard bytes.count >= Self.minimumEventBytes else {
            throw Self.failure(key, "truncated", "seq \(key): event is \(bytes.count) bytes, shorter than its header")
        }
        let inner = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 3, as: UInt64.self))
        guard inner == key else {
            throw Self.failure(key, "seq_mismatch", "seq \(key): the event's bytes carry seq \(inner)")
        }
        guard bytes[0] == EventCodec.formatVersion else {
            throw Self.failure(key, "format", "seq \(key): unknown encoding format \(bytes[0])")
        }
        if let (at, want) = mustPass, at == key, want != storedHash {
            throw Self.failure(key, "checkpoint_mismatch", "seq \(key): the log does not extend the checkpoint: "
                + "its hash is \(storedHash.hex), the checkpoint says \(want.hex)")
        }
        seq = key
        hash = storedHash
    }

    /// SHA-256(previous ‖ bytes) must equal the stored hash; with `deep`, the bytes must
    /// also be a canonical encoding.
    @inline(__always)
    static func checkHash(_ key: UInt64, previous: Digest, stored: Digest, bytes: UnsafeRawBufferPointer, deep: Bool) throws {
        let computed = Digest.sha256(previous, bytes)
        guard computed == stored else {
            throw failure(key, "hash_mismatch", "seq \(key): hash mismatch: stored \(stored.hex), "
                + "computed \(computed.hex) from the previous hash and the event's bytes")
        }
        if deep { try checkCanonical(key, bytes) }
    }

    /// Decodes `bytes` and requires the re-encoding to be byte-identical.
    static func checkCanonical(_ key: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
        let event: Event
        do {
            event = try EventCodec.decode(bytes)
        } catch let e as LedgerError {
            throw failure(key, "undecodable", "seq \(key): the event does not decode: \(e.message)")
        }
        guard EventCodec.encode(event).elementsEqual(bytes) else {
            throw failure(key, "not_canonical", "seq \(key): the event's bytes are not its canonical encoding")
        }
        try checkContentHash(key, event)
    }

    /// An `action.proposed` or `action.edited` records the content hash that later taps are
    /// bound to; it must be SHA-256 of the preview it records. The chain alone cannot tell:
    /// whoever re-chains an export can alter a preview and keep the old hash, and with it
    /// the taps given to other content.
    /// - throws: `integrity_failure` with `problem` and `field` `content_hash`.
    public static func checkContentHash(_ key: UInt64, _ event: Event) throws {
        let recorded: Digest, preview: Preview
        switch event.payload {
        case .proposed(let p): (recorded, preview) = (p.contentHash, p.preview)
        case .edited(let e): (recorded, preview) = (e.contentHash, e.preview)
        default: return
        }
        let computed = EventCodec.contentHash(of: preview)
        guard computed == recorded else {
            throw LedgerError(.integrityFailure, "seq \(key): field 'content_hash' \(recorded.hex) is not the hash of "
                + "the \(event.type.name)'s preview, \(computed.hex)",
                details: ["seq": .number(Double(key)), "problem": "content_hash", "field": "content_hash"])
        }
    }

    /// Checks the end of the walk: the log reached the checkpoint it must pass, and (for a
    /// store) the head record agrees with the last event.
    public func finish(head: LogHead?) throws {
        if let (at, _) = mustPass, seq < at {
            throw Self.failure(seq + 1, "truncated_tail", "the log ends at seq \(seq) but the checkpoint covers "
                + "\(at) events: seq \(seq + 1)…\(at) are missing (tail truncated or rewritten)")
        }
        guard let head else { return }
        if head.seq > seq {
            throw Self.failure(seq + 1, "missing", "seq \(seq + 1) is missing: the log ends at seq \(seq) "
                + "but the head record says \(head.seq)")
        }
        if head.seq < seq {
            throw Self.failure(head.seq + 1, "beyond_head", "seq \(head.seq + 1): events after the head record "
                + "(seq \(head.seq)); the log ends at seq \(seq)")
        }
        if head.hash != hash {
            throw Self.failure(seq, "head_mismatch", "seq \(seq): the head record's hash \(head.hash.hex) "
                + "is not the last event's hash \(hash.hex)")
        }
    }

    /// `integrity_failure` with `seq` and a machine-readable `problem` in the details.
    public static func failure(_ seq: UInt64, _ problem: String, _ message: String) -> LedgerError {
        LedgerError(.integrityFailure, message, details: ["seq": .number(Double(seq)), "problem": .string(problem)])
    }
}
