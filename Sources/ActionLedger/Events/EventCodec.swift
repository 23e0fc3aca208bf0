/// The canonical binary encoding of events: the bytes the hash chain covers.
///
/// Layout (Specs/integrity.md gives it byte by byte): format byte `1`, type code, schema
/// version, seq (8 bytes BE), at (8 bytes BE, ms), actor, device?, command id, org,
/// person, action id?, then the payload's fields in declaration order.
public enum EventCodec {
    /// The first byte of every encoded event.
    public static let formatVersion: UInt8 = 1

    /// Encodes `event` canonically.
    public static func encode(_ event: Event) -> [UInt8] {
        encode(event, after: 0)
    }

    /// `event`'s canonical bytes after `reserved` zero bytes (room for the chain hash the
    /// log stores before them).
    static func encode(_ event: Event, after reserved: Int) -> [UInt8] {
        var w = BinaryWriter(reserving: reserved)
        w.u8(formatVersion)
        w.u8(event.type.rawValue)
        w.u8(event.schemaVersion)
        w.fixed64(event.seq)
        w.timestamp(event.at)
        w.string(event.actor)
        w.optional(event.device) { $0.string($1) }
        w.string(event.commandId)
        w.string(event.org)
        w.string(event.person)
        w.optional(event.actionId) { $0.string($1) }
        encodePayload(event.payload, into: &w)
        return w.bytes
    }

    /// Decodes one event, refusing unknown formats, types and schema versions, and any
    /// byte sequence that is not exactly what ``encode(_:)`` would produce.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Event {
        var r = BinaryReader(bytes)
        let format = try r.u8()
        guard format == formatVersion else { throw r.fail("unknown encoding format \(format)") }
        let code = try r.u8()
        guard let type = EventType(rawValue: code) else { throw r.fail("unknown event type code \(code)") }
        let version = try r.u8()
        guard (1...type.schemaVersion).contains(version) else {
            throw r.fail("unsupported schema version \(version) of \(type.name) (this build reads 1…\(type.schemaVersion))")
        }
        let seq = try r.fixed64()
        let at = try r.timestamp()
        // Appends keep `at` within 2000…2100 (TimeRules); a stored one outside is damage.
        guard at >= TimeRules.earliest, at < TimeRules.latest else { throw r.fail("event time \(at.milliseconds) ms out of range") }
        let actor = try r.string()
        let device = try r.optional { try $0.string() }
        let commandId = try r.string()
        let org = try r.string()
        let person = try r.string()
        let actionId = try r.optional { try $0.string() }
        let payload = try decodePayload(type, version: version, &r)
        guard r.isAtEnd else { throw r.fail("trailing bytes") }
        return Event(seq: seq, at: at, actor: actor, device: device, commandId: commandId, org: org,
                     person: person, actionId: actionId, payload: payload)
    }

    /// Reads only the seq of an encoded event (bytes 3…10), for verification.
    public static func seq(of bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard bytes.count >= 11 else { return nil }
        return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 3, as: UInt64.self))
    }

    /// SHA-256 of the preview's canonical bytes: what a tap is bound to.
    public static func contentHash(of preview: Preview) -> Digest {
        var w = BinaryWriter(capacity: 64)
        writePreview(preview, &w)
        return w.bytes.withUnsafeBytes { Digest.sha256($0) }
    }

    static func writePreview(_ p: Preview, _ w: inout BinaryWriter) {
        w.string(p.text)
        w.varint(UInt64(p.assets))
        w.optional(p.price) { $0.double($1) }
    }

    static func readPreview(_ r: inout BinaryReader) throws -> Preview {
        let text = try r.string()
        let assets = try r.varint()
        guard assets <= UInt64(Int.max) else { throw r.fail("asset count out of range") }
        return Preview(text: text, assets: Int(assets), price: try r.optional { try $0.double() })
    }

    static func writeStakes(_ s: Stakes, _ w: inout BinaryWriter) { w.u8(UInt8(s.rank)) }

    static func readStakes(_ r: inout BinaryReader) throws -> Stakes {
        switch try r.u8() {
        case 0: return .low
        case 1: return .medium
        case 2: return .high
        default: throw r.fail("invalid stakes")
        }
    }
}
