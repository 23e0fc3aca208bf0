import Crypto
import Foundation

/// What a device key's holder declares about when the key can sign (Specs/statements.md):
/// a Secure Enclave key bound to biometry signs only after Face ID (`user-verification`).
public enum KeyProtection: String, Sendable, CaseIterable {
    case none
    case device
    case userVerification = "user-verification"

    var code: UInt8 { self == .none ? 0 : self == .device ? 1 : 2 }
    init?(code: UInt8) {
        switch code {
        case 0: self = .none
        case 1: self = .device
        case 2: self = .userVerification
        default: return nil
        }
    }
}

/// How the engine came to trust a device key.
public enum KeyTrust: Sendable, Equatable {
    /// The operator linked the person's first keyed device (trust on first use).
    case firstUse
    /// An unrevoked keyed device of the same person signed the link statement
    /// (``Statement/link(storeId:org:person:device:platform:key:introducedBy:)``).
    case introducedBy(device: String, signature: [UInt8])
    /// Every keyed device of the person was revoked; her recovery key in force (`key`, its
    /// fingerprint) signed the recovery link statement (Specs/statements.md §3.3).
    case recovery(key: Digest, signature: [UInt8])
}

/// A device's P-256 public key as recorded in `device.linked` (schema 2).
public struct DeviceKey: Sendable, Equatable {
    /// The SubjectPublicKeyInfo, DER: exactly the bytes the engine re-encodes from the key,
    /// so one key has one spelling in the log.
    public let spki: [UInt8]
    public var protection: KeyProtection
    public var trust: KeyTrust

    /// Refuses bytes that are not the canonical SPKI DER of a P-256 point.
    public init(spki: [UInt8], protection: KeyProtection, trust: KeyTrust) throws {
        guard PublicKeyCache.key(spki) != nil else {
            throw LedgerError(.invalidInput, "the public key is not a P-256 SubjectPublicKeyInfo (DER)",
                              details: ["field": "public_key"])
        }
        self.spki = spki
        self.protection = protection
        self.trust = trust
        fingerprint = spki.withUnsafeBytes { Digest.sha256($0) }
    }

    /// SHA-256 of the SPKI DER: how statements, proofs and audits name the key. Hashed once,
    /// when the key is read: a signed tap names it three or four times.
    public let fingerprint: Digest

    /// Whether `signature` (raw r‖s, 64 bytes) is this key's ECDSA P-256/SHA-256
    /// signature over `message`.
    public func verifies(_ signature: [UInt8], over message: [UInt8]) -> Bool {
        PublicKeyCache.verifies(spki, signature, over: message)
    }

    /// Reads a public key file: SPKI DER, or PEM (`-----BEGIN PUBLIC KEY-----`).
    public static func readPublicKey(_ bytes: [UInt8]) throws -> [UInt8] {
        if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN") {
            guard let key = try? P256.Signing.PublicKey(pemRepresentation: text) else {
                throw LedgerError(.invalidInput, "the PEM public key is not a P-256 key", details: ["field": "public_key"])
            }
            return Array(key.derRepresentation)
        }
        guard let key = (try? P256.Signing.PublicKey(derRepresentation: bytes)) ?? compressed(bytes) else {
            throw LedgerError(.invalidInput, "the public key file is neither SPKI DER nor PEM of a P-256 key",
                              details: ["field": "public_key"])
        }
        return Array(key.derRepresentation)
    }

    /// The SPKI header of a P-256 key with a compressed point (RFC 5480): the 33 bytes after
    /// it are the point, re-encoded uncompressed (one spelling per key, statements.md §1).
    private static let compressedHeader: [UInt8] = Hex.decode("3039301306072a8648ce3d020106082a8648ce3d030107032200")!

    private static func compressed(_ bytes: [UInt8]) -> P256.Signing.PublicKey? {
        guard bytes.count == compressedHeader.count + 33, bytes.starts(with: compressedHeader) else { return nil }
        return try? P256.Signing.PublicKey(compressedRepresentation: bytes.suffix(33))
    }
}

/// ECDSA signature spellings a client may send, brought to the one the log stores.
public enum P256Signature {
    /// Raw r‖s (64 bytes) from raw or DER input; nil when it is neither.
    public static func normalize(_ bytes: [UInt8]) -> [UInt8]? {
        if bytes.count == 64, (try? P256.Signing.ECDSASignature(rawRepresentation: bytes)) != nil { return bytes }
        guard let sig = try? P256.Signing.ECDSASignature(derRepresentation: bytes) else { return nil }
        return Array(sig.rawRepresentation)
    }

    /// Signs `message` with a PEM private key (the CLI's `--key FILE`); raw r‖s.
    public static func sign(_ message: [UInt8], pemPrivateKey: String) throws -> (signature: [UInt8], spki: [UInt8]) {
        let key = try privateKey(pemPrivateKey)
        let sig = try key.signature(for: message)
        return (Array(sig.rawRepresentation), Array(key.publicKey.derRepresentation))
    }

    /// The SPKI DER of a PEM private key's public half (what a statement names it by).
    public static func publicKey(pemPrivateKey: String) throws -> [UInt8] {
        Array(try privateKey(pemPrivateKey).publicKey.derRepresentation)
    }

    private static func privateKey(_ pem: String) throws -> P256.Signing.PrivateKey {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
            throw LedgerError(.invalidInput, "the key file is not a PEM P-256 private key", details: ["field": "key"])
        }
        return key
    }
}
