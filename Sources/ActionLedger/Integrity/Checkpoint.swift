/// A signed statement "this log had `logSize` events and its head hash was `headHash`"
/// (`ledger checkpoint`). Kept outside the store, it lets `ledger verify --checkpoint`
/// prove the log still extends it, which catches a truncated or rewritten tail.
///
/// JSON (Specs/integrity.md, "Checkpoints"), keys in this order:
/// `{"format":"actionledger-checkpoint-v1","log_size":N,"head_hash":HEX64,"time":ISO,
///   "key_id":HEX16,"signature":HEX128}`. The signature is Ed25519 over ``signedBytes``.
public struct Checkpoint: Sendable, Equatable {
    public static let format = "actionledger-checkpoint-v1"

    public var logSize: UInt64
    public var headHash: Digest
    /// When it was taken (engine clock, milliseconds, UTC).
    public var time: Timestamp
    public var keyId: String
    /// 64-byte Ed25519 signature over ``signedBytes``.
    public var signature: [UInt8]

    /// The exact bytes signed: five lines of ASCII, each ending in LF —
    /// the format string, `log_size` in decimal, `head_hash` in lowercase hex, `time` as
    /// ISO-8601 with milliseconds and `Z`, and `key_id`.
    public var signedBytes: [UInt8] {
        Array("\(Checkpoint.format)\n\(logSize)\n\(headHash.hex)\n\(time.iso8601)\n\(keyId)\n".utf8)
    }

    /// Signs the head `head` at `time` with `key`.
    public init(head: LogHead, time: Timestamp, key: CheckpointSigningKey) throws {
        logSize = head.seq
        headHash = head.hash
        self.time = time
        keyId = key.publicKey.keyId
        signature = []
        signature = try key.sign(signedBytes)
    }

    /// Parses a checkpoint's JSON strictly (the signature is checked by ``verifySignature(with:)``).
    public init(json: JSON) throws {
        var r = try FieldReader(json)
        let f = try r.string("format", max: 64)
        guard f == Checkpoint.format else { throw r.fail("format", "expected \"\(Checkpoint.format)\", got \"\(f)\"") }
        logSize = UInt64(try r.integer("log_size", in: 0...(1 << 53)))
        headHash = try r.digest("head_hash")
        time = try r.timestamp("time")
        keyId = try r.string("key_id", max: 16)
        signature = try KeyFiles.hexField(&r, "signature", bytes: 64)
        try r.finish()
        // Only the lowercase spelling is signed; refuse others rather than guess.
        guard case .string(let h)? = json["head_hash"], h == headHash.hex else {
            throw r.fail("head_hash", "expected 64 lowercase hex digits")
        }
        // The signature covers the time as written; another spelling of the same instant
        // (a zone offset, fewer fraction digits) would verify against the re-rendered text.
        guard case .string(let t)? = json["time"], t == time.iso8601 else {
            throw r.fail("time", "expected ISO-8601 UTC with exactly three fraction digits and Z (\(time.iso8601)), as signed")
        }
    }

    public var json: JSON {
        ["format": .string(Checkpoint.format), "log_size": .number(Double(logSize)), "head_hash": .string(headHash.hex),
         "time": .string(time.iso8601), "key_id": .string(keyId), "signature": .string(Hex.encode(signature))]
    }

    /// The head it vouches for.
    public var head: LogHead { LogHead(seq: logSize, hash: headHash) }

    /// A checkpoint signs a head that existed when it was made: one dated (`time`) before
    /// the event at its size (`covered`) was backdated. The same check in a store, an export
    /// and an import.
    /// - throws: `integrity_failure`, `problem: checkpoint_backdated`.
    static func requireNotBackdated(_ time: Timestamp, _ covered: Event) throws {
        guard time < covered.at else { return }
        throw ChainVerifier.failure(covered.seq, "checkpoint_backdated", "the checkpoint is dated \(time.iso8601), "
            + "before seq \(covered.seq) was recorded (\(covered.at.iso8601))")
    }

    /// Checks the key id and the Ed25519 signature.
    /// - throws: `integrity_failure` when the checkpoint was not signed by `key` or was altered.
    public func verifySignature(with key: CheckpointPublicKey) throws {
        guard keyId == key.keyId else {
            throw LedgerError(.integrityFailure, "the checkpoint was signed by key \(keyId), not by the given key \(key.keyId)",
                              details: ["problem": "wrong_key"])
        }
        guard key.isValidSignature(signature, for: signedBytes) else {
            throw LedgerError(.integrityFailure, "the checkpoint's signature is not valid for key \(keyId): "
                + "it was forged or altered", details: ["problem": "bad_signature"])
        }
    }
}
