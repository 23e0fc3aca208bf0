/// The canonical bytes and JSON of a ``DeviceKey`` in `device.linked` schema 2, and schema 3
/// for a key linked by recovery (Specs/events.md, "Versioning").
extension DeviceKey {
    func encode(_ w: inout BinaryWriter) {
        w.varint(UInt64(spki.count))
        w.bytes.append(contentsOf: spki)
        w.u8(protection.code)
        switch trust {
        case .firstUse: w.u8(0)
        case .introducedBy(let device, let signature):
            w.u8(1)
            w.string(device)
            w.bytes.append(contentsOf: signature)
        case .recovery(let key, let signature):
            w.u8(2)
            w.digest(key)
            w.bytes.append(contentsOf: signature)
        }
    }

    static func decode(_ r: inout BinaryReader) throws -> DeviceKey {
        let n = try r.varint()
        guard n <= 512 else { throw r.fail("public key too long") }
        let spki = try r.raw(Int(n))
        guard let protection = KeyProtection(code: try r.u8()) else { throw r.fail("invalid key protection") }
        let trust: KeyTrust
        switch try r.u8() {
        case 0: trust = .firstUse
        case 1: trust = .introducedBy(device: try r.string(), signature: try r.raw(64))
        case 2: trust = .recovery(key: try r.digest(), signature: try r.raw(64))
        default: throw r.fail("invalid key trust")
        }
        do { return try DeviceKey(spki: spki, protection: protection, trust: trust) } catch { throw r.fail("invalid public key") }
    }

    var json: JSON {
        var o: JSONObject = ["format": "p256", "public_key": .string(Hex.encode(spki)), "fingerprint": .string(fingerprint.hex),
                             "protection": .string(protection.rawValue)]
        switch trust {
        case .firstUse: o["trust"] = "first_use"
        case .introducedBy(let device, let signature):
            o["trust"] = "introduced"
            o["introduced_by"] = .string(device)
            o["introduction_signature"] = .string(Hex.encode(signature))
        case .recovery(let key, let signature):
            o["trust"] = "recovery"
            o["recovery_key_fingerprint"] = .string(key.hex)
            o["introduction_signature"] = .string(Hex.encode(signature))
        }
        return .object(o)
    }

    init(fields: FieldReader) throws {
        var r = fields
        guard try r.string("format", max: 16) == "p256" else { throw r.fail("format", "expected p256") }
        let spki = try r.hexBytes("public_key", count: nil)
        let stated = try r.digest("fingerprint")
        guard let protection = KeyProtection(rawValue: try r.string("protection", max: 32)) else {
            throw r.fail("protection", "expected none, device or user-verification")
        }
        let trust: KeyTrust
        switch try r.string("trust", max: 16) {
        case "first_use": trust = .firstUse
        case "introduced":
            trust = .introducedBy(device: try r.identifier("introduced_by"), signature: try r.hexBytes("introduction_signature", count: 64))
        case "recovery":
            trust = .recovery(key: try r.digest("recovery_key_fingerprint"), signature: try r.hexBytes("introduction_signature", count: 64))
        default: throw r.fail("trust", "expected first_use, introduced or recovery")
        }
        try r.finish()
        do { try self.init(spki: spki, protection: protection, trust: trust) } catch { throw r.fail("public_key", "is not a P-256 SPKI DER") }
        guard fingerprint == stated else { throw r.fail("fingerprint", "is not the SHA-256 of public_key") }
    }
}

extension FieldReader {
    /// Lowercase hex (one spelling, as every hex the log prints); `count` bytes when given.
    mutating func hexBytes(_ key: String, count: Int?) throws -> [UInt8] {
        let s = try string(key, max: 1024)
        guard let b = Hex.decode(s), count.map({ b.count == $0 }) ?? true else {
            throw fail(key, count.map { "expected \($0 * 2) lowercase hex digits" } ?? "expected lowercase hex")
        }
        return b
    }
}

extension BinaryReader {
    mutating func raw(_ n: Int) throws -> [UInt8] {
        guard n >= 0, offset + n <= buffer.count else { throw fail("truncated bytes") }
        defer { offset += n }
        return Array(buffer[offset..<offset + n])
    }
}
