/// A person's recovery key (Specs/statements.md §1.2): a P-256 key she keeps offline
/// (printed, or on a hardware key) that can link her a keyed device once every keyed device
/// of hers is revoked — so losing phone and laptop does not lock her out, and the operator
/// still cannot give anyone a key that signs as her.
public struct RecoveryKey: Sendable, Equatable {
    /// The SubjectPublicKeyInfo, DER, as the engine re-encodes it (one spelling per key).
    public let spki: [UInt8]

    /// - throws: `invalid_input` for bytes that are not the canonical SPKI DER of a P-256 key.
    public init(spki: [UInt8]) throws {
        self.spki = try DeviceKey(spki: spki, protection: .none, trust: .firstUse).spki
    }

    /// SHA-256 of the SPKI DER: how statements and audits name it.
    public var fingerprint: Digest { spki.withUnsafeBytes { Digest.sha256($0) } }

    /// Whether `signature` (raw r‖s) is this key's ECDSA P-256/SHA-256 signature over `message`.
    public func verifies(_ signature: [UInt8], over message: [UInt8]) -> Bool {
        PublicKeyCache.verifies(spki, signature, over: message)
    }
}

/// Who vouched for a recovery key.
public enum RecoveryTrust: Sendable, Equatable {
    /// Registered by the operator with the person's first keyed device, in the same command:
    /// the operator is trusted exactly as far as for that first key (trust on first use).
    case firstUse
    /// An unrevoked keyed device of hers signed the recovery-key statement with its key in force.
    case device(String, signature: [UInt8])
    /// The recovery key it replaces signed the recovery-key statement.
    case recoveryKey(signature: [UInt8])

    /// The `signed_by:` line of the recovery-key statement; nil for `firstUse` (nothing is signed).
    var signedBy: String? {
        switch self {
        case .firstUse: nil
        case .device(let d, _): "device:" + d
        case .recoveryKey: "recovery_key"
        }
    }

    var signature: [UInt8]? {
        switch self {
        case .firstUse: nil
        case .device(_, let s), .recoveryKey(let s): s
        }
    }
}

/// `person.recovery_key_set` (event code 23): the person's recovery key in force from this
/// event on, replacing `previousFingerprint` (bound by the statement, so a signed
/// registration cannot be replayed once the key has moved on).
public struct RecoveryKeySet: Sendable, Equatable {
    public var key: RecoveryKey
    /// The recovery key it replaces; nil for her first.
    public var previousFingerprint: Digest?
    public var trust: RecoveryTrust

    public init(key: RecoveryKey, previousFingerprint: Digest?, trust: RecoveryTrust) {
        self.key = key
        self.previousFingerprint = previousFingerprint
        self.trust = trust
    }

    func encode(_ w: inout BinaryWriter) {
        w.varint(UInt64(key.spki.count))
        w.bytes.append(contentsOf: key.spki)
        if let p = previousFingerprint {
            w.u8(1)
            w.digest(p)
        } else {
            w.u8(0)
        }
        switch trust {
        case .firstUse: w.u8(0)
        case .device(let d, let s):
            w.u8(1)
            w.string(d)
            w.bytes.append(contentsOf: s)
        case .recoveryKey(let s):
            w.u8(2)
            w.bytes.append(contentsOf: s)
        }
    }

    static func decode(_ r: inout BinaryReader) throws -> RecoveryKeySet {
        let n = try r.varint()
        guard n <= 512 else { throw r.fail("public key too long") }
        let spki = try r.raw(Int(n))
        let previous: Digest?
        switch try r.u8() {
        case 0: previous = nil
        case 1: previous = try r.digest()
        default: throw r.fail("invalid optional")
        }
        let trust: RecoveryTrust
        switch try r.u8() {
        case 0: trust = .firstUse
        case 1: trust = .device(try r.string(), signature: try r.raw(64))
        case 2: trust = .recoveryKey(signature: try r.raw(64))
        default: throw r.fail("invalid recovery key trust")
        }
        do { return RecoveryKeySet(key: try RecoveryKey(spki: spki), previousFingerprint: previous, trust: trust) } catch {
            throw r.fail("invalid public key")
        }
    }

    var json: JSON {
        var o: JSONObject = ["key": ["format": "p256", "public_key": .string(Hex.encode(key.spki)),
                                     "fingerprint": .string(key.fingerprint.hex)]]
        if let p = previousFingerprint { o["previous_key_fingerprint"] = .string(p.hex) }
        switch trust {
        case .firstUse: o["trust"] = "first_use"
        case .device(let d, let s):
            o["trust"] = "device"
            o["signed_by"] = .string(d)
            o["signature"] = .string(Hex.encode(s))
        case .recoveryKey(let s):
            o["trust"] = "recovery_key"
            o["signature"] = .string(Hex.encode(s))
        }
        return .object(o)
    }

    init(fields r: inout FieldReader) throws {
        var k = try r.object("key")
        guard try k.string("format", max: 16) == "p256" else { throw k.fail("format", "expected p256") }
        let spki = try k.hexBytes("public_key", count: nil)
        let stated = try k.digest("fingerprint")
        try k.finish()
        do { key = try RecoveryKey(spki: spki) } catch { throw k.fail("public_key", "is not a P-256 SPKI DER") }
        guard key.fingerprint == stated else { throw k.fail("fingerprint", "is not the SHA-256 of public_key") }
        previousFingerprint = r.raw("previous_key_fingerprint") == nil ? nil : try r.digest("previous_key_fingerprint")
        switch try r.string("trust", max: 16) {
        case "first_use": trust = .firstUse
        case "device": trust = .device(try r.identifier("signed_by"), signature: try r.hexBytes("signature", count: 64))
        case "recovery_key": trust = .recoveryKey(signature: try r.hexBytes("signature", count: 64))
        default: throw r.fail("trust", "expected first_use, device or recovery_key")
        }
    }
}

extension Statement {
    /// The first line of a recovery-key statement (Specs/statements.md §3.2).
    public static let recoveryKeyDomain = "actionledger-recovery-key-v1"
    /// The first line of a recovery link statement (Specs/statements.md §3.3).
    public static let recoveryLinkDomain = "actionledger-recovery-link-v1"

    /// What a keyed device of the person, or her recovery key in force, signs to put `key`
    /// in force as her recovery key in place of `previous` (`none` for her first).
    public static func recoveryKey(storeId: Digest, org: String, person: String, key: Digest, previous: Digest?,
                                   signedBy: String) -> [UInt8] {
        render(recoveryKeyDomain, [
            ("store", storeId.hex), ("org", org), ("person", person), ("key", key.hex),
            ("previous_key", previous?.hex ?? "none"), ("signed_by", signedBy),
        ])
    }

    /// What her recovery key signs to vouch for a new device's key once every keyed device
    /// of hers is revoked: the link statement's lines (§3), its last naming the recovery key.
    public static func recoveryLink(storeId: Digest, org: String, person: String, device: String, platform: Platform,
                                    key: DeviceKey, recoveryKey: Digest) -> [UInt8] {
        render(recoveryLinkDomain, [
            ("store", storeId.hex), ("org", org), ("person", person), ("device", device), ("platform", platform.rawValue),
            ("key", key.fingerprint.hex), ("key_protection", key.protection.rawValue), ("recovery_key", recoveryKey.hex),
        ])
    }
}

extension DeviceKey {
    /// Who vouched for the key, as the audit prints it (the introduction chain).
    public var trustText: String {
        switch trust {
        case .firstUse: "first use"
        case .introducedBy(let d, _): "introduced by \(d)"
        case .recovery(let key, _): "recovered with recovery key \(key.hex.prefix(16))…"
        }
    }
}

extension RecoveryKeySet {
    /// Who vouched for the recovery key, as the audit prints it.
    public var trustText: String {
        switch trust {
        case .firstUse: "first use, with her first keyed device"
        case .device(let d, _): "signed by \(d)"
        case .recoveryKey: "signed by the recovery key it replaces"
        }
    }
}
