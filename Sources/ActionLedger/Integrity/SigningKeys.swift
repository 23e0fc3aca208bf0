import Crypto

/// An Ed25519 key pair for signing checkpoints (`ledger keygen`).
///
/// Files (Specs/integrity.md, "Keys"): `PREFIX.key` is
/// `{"algorithm":"ed25519","key_id":…,"private_key":HEX64}` (mode 0600) and `PREFIX.pub`
/// is `{"algorithm":"ed25519","key_id":…,"public_key":HEX64}`, the raw 32-byte keys in
/// lowercase hex. The key id is the first 16 hex digits of SHA-256(raw public key).
public struct CheckpointSigningKey: Sendable {
    // The raw 32-byte seed: swift-crypto's key types are not Sendable, bytes are.
    private let raw: [UInt8]
    var key: Curve25519.Signing.PrivateKey { try! Curve25519.Signing.PrivateKey(rawRepresentation: raw) }

    /// A fresh random key.
    public init() { raw = Array(Curve25519.Signing.PrivateKey().rawRepresentation) }

    /// Reads a `PREFIX.key` file's JSON.
    public init(json: JSON) throws {
        var r = try FieldReader(json)
        try KeyFiles.checkAlgorithm(&r)
        let raw = try KeyFiles.hexField(&r, "private_key", bytes: 32)
        let claimed = try r.string("key_id", max: 64)
        try r.finish()
        guard (try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)) != nil else {
            throw r.fail("private_key", "not an Ed25519 private key")
        }
        self.raw = raw
        guard claimed == publicKey.keyId else {
            throw r.fail("key_id", "is \(claimed) but the key's id is \(publicKey.keyId)")
        }
    }

    public var publicKey: CheckpointPublicKey { CheckpointPublicKey(key: key.publicKey) }

    /// The `PREFIX.key` file's JSON.
    public var json: JSON {
        ["algorithm": "ed25519", "key_id": .string(publicKey.keyId), "private_key": .string(Hex.encode(key.rawRepresentation))]
    }

    /// Signs `message` (deterministic Ed25519 signature, 64 bytes).
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: message))
    }
}

/// An Ed25519 public key that checks checkpoint signatures (`PREFIX.pub`).
public struct CheckpointPublicKey: Sendable {
    // Raw bytes, validated at init: the swift-crypto key type is not Sendable.
    private let raw: [UInt8]
    var key: Curve25519.Signing.PublicKey { try! Curve25519.Signing.PublicKey(rawRepresentation: raw) }

    init(key: Curve25519.Signing.PublicKey) { raw = Array(key.rawRepresentation) }

    /// Reads a `PREFIX.pub` file's JSON.
    public init(json: JSON) throws {
        var r = try FieldReader(json)
        try KeyFiles.checkAlgorithm(&r)
        let raw = try KeyFiles.hexField(&r, "public_key", bytes: 32)
        let claimed = try r.string("key_id", max: 64)
        try r.finish()
        guard (try? Curve25519.Signing.PublicKey(rawRepresentation: raw)) != nil else {
            throw r.fail("public_key", "not an Ed25519 public key")
        }
        self.raw = raw
        guard claimed == keyId else { throw r.fail("key_id", "is \(claimed) but the key's id is \(keyId)") }
    }

    /// First 16 lowercase hex digits of SHA-256 of the raw 32-byte public key.
    public var keyId: String {
        String(raw.withUnsafeBytes { Digest.sha256($0) }.hex.prefix(16))
    }

    /// The raw 32 bytes.
    public var rawBytes: [UInt8] { raw }

    /// The `PREFIX.pub` file's JSON.
    public var json: JSON {
        ["algorithm": "ed25519", "key_id": .string(keyId), "public_key": .string(Hex.encode(key.rawRepresentation))]
    }

    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.isValidSignature(signature, for: message)
    }
}

enum KeyFiles {
    static func checkAlgorithm(_ r: inout FieldReader) throws {
        let a = try r.string("algorithm", max: 32)
        guard a == "ed25519" else { throw r.fail("algorithm", "expected \"ed25519\", got \"\(a)\"") }
    }

    static func hexField(_ r: inout FieldReader, _ key: String, bytes: Int) throws -> [UInt8] {
        let s = try r.string(key, max: bytes * 2)
        guard let b = Hex.decode(s), b.count == bytes else { throw r.fail(key, "expected \(bytes * 2) hex digits") }
        return b
    }
}
