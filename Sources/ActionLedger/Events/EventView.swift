/// An encoded event read in place: the header's fields as byte ranges of the stored
/// record, found by walking its length prefixes once, with nothing allocated and no
/// `Event` or `String` built. What a lean fold reads (rebuild, catch-up, a query's tail):
/// filing an event under its actor, device, person and action needs no more.
///
/// Every offset is bounds-checked while walking: a short or malformed record is
/// `corrupt_event`, never a trap. A view lives no longer than the buffer it reads (an
/// LMDB value is valid only inside its transaction).
public struct EventView {
    /// The canonical bytes (the stored value without its 32-byte chain hash).
    public let bytes: UnsafeRawBufferPointer
    public let type: EventType
    public let schemaVersion: UInt8
    public let seq: UInt64
    public let at: Timestamp
    public let actor: Range<Int>
    public let device: Range<Int>?
    public let org: Range<Int>
    public let person: Range<Int>
    public let actionId: Range<Int>?
    /// Where the payload's fields start.
    public let payload: Int

    /// Reads the stored value of an event (chain hash ‖ canonical bytes).
    public init(stored value: UnsafeRawBufferPointer) throws {
        guard value.count > 32 else { throw LedgerError(.corruptEvent, "stored event shorter than its hash") }
        try self.init(UnsafeRawBufferPointer(rebasing: value[32...]))
    }

    /// Reads canonical event bytes (Specs/integrity.md gives the layout).
    public init(_ bytes: UnsafeRawBufferPointer) throws {
        self.bytes = bytes
        var r = Walker(bytes)
        guard try r.u8() == EventCodec.formatVersion else { throw r.fail("unknown encoding format") }
        let code = try r.u8()
        guard let type = EventType(rawValue: code) else { throw r.fail("unknown event type code \(code)") }
        self.type = type
        schemaVersion = try r.u8()
        guard (1...type.schemaVersion).contains(schemaVersion) else { throw r.fail("unsupported schema version \(schemaVersion)") }
        seq = try r.fixed64()
        at = Timestamp(milliseconds: Int64(bitPattern: try r.fixed64()))
        guard at >= TimeRules.earliest, at < TimeRules.latest else { throw r.fail("event time \(at.milliseconds) ms out of range") }
        actor = try r.string()
        device = try r.optionalString()
        _ = try r.string()  // command id
        org = try r.string()
        person = try r.string()
        actionId = try r.optionalString()
        payload = r.offset
    }

    /// The bytes of `range` (a field of this view).
    @inline(__always)
    public subscript(range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }

    /// A field as a `String` (ids of 15 bytes or fewer are stored inline: no allocation).
    public func string(_ range: Range<Int>) -> String {
        String(decoding: self[range], as: UTF8.self)
    }

    /// A proposal's specialist name and surface: the payload's first and third strings.
    public func proposalFiling() throws -> (specialist: Range<Int>, surface: Range<Int>) {
        guard type == .actionProposed else { throw LedgerError(.corruptEvent, "seq \(seq) is a \(type.name), not a proposal") }
        var r = Walker(bytes, at: payload)
        let name = try r.string()
        _ = try r.string()  // agent
        return (name, try r.string())
    }

    /// The first string of the payload: the device of `device.linked` and `device.revoked`.
    public func payloadString() throws -> Range<Int> {
        var r = Walker(bytes, at: payload)
        return try r.string()
    }

    /// Walks length-prefixed fields, bounds-checking each.
    struct Walker {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        init(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) {
            self.bytes = bytes
            self.offset = offset
        }

        func fail(_ what: String) -> LedgerError { LedgerError(.corruptEvent, "\(what) at byte \(offset)") }

        @inline(__always)
        mutating func u8() throws -> UInt8 {
            guard offset < bytes.count else { throw fail("truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        @inline(__always)
        mutating func fixed64() throws -> UInt64 {
            guard offset + 8 <= bytes.count else { throw fail("truncated") }
            defer { offset += 8 }
            return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }

        @inline(__always)
        mutating func string() throws -> Range<Int> {
            // Lengths of ids and names fit one varint byte; longer ones take the loop.
            var n = UInt64(try u8())
            if n >= 0x80 {
                n &= 0x7F
                var shift: UInt64 = 7
                while true {
                    let b = try u8()
                    guard shift < 63 else { throw fail("varint overflow") }
                    n |= UInt64(b & 0x7F) << shift
                    if b & 0x80 == 0 { break }
                    shift += 7
                }
            }
            guard n <= UInt64(bytes.count - offset) else { throw fail("truncated string") }
            defer { offset += Int(n) }
            return offset..<offset + Int(n)
        }

        @inline(__always)
        mutating func optionalString() throws -> Range<Int>? {
            switch try u8() {
            case 0: return nil
            case 1: return try string()
            default: throw fail("invalid optional flag")
            }
        }
    }
}

extension EventView {
    /// What the Today feed keeps of a proposal, read in place.
    public struct ProposalFacts {
        public var specialist: Range<Int>
        public var surface: Range<Int>
        public var kind: Range<Int>
        public var stakes: Stakes
        public var expiresAt: Timestamp?
        /// The stakes pinned at proposal (schema 2), if any.
        public var pinnedStakes: Stakes?
    }

    /// A proposal's facts, walking its payload without decoding the preview or rationale.
    public func proposalFacts() throws -> ProposalFacts {
        guard type == .actionProposed else { throw LedgerError(.corruptEvent, "seq \(seq) is a \(type.name), not a proposal") }
        var r = Walker(bytes, at: payload)
        let name = try r.string()
        _ = try r.string()  // agent
        let surface = try r.string(), kind = try r.string()
        _ = try r.string(); _ = try r.string()  // target type, id
        let stakes = try Self.stakes(try r.u8(), &r)
        _ = try r.fixed64()  // confidence
        _ = try r.string()  // preview text
        _ = try r.varint()  // assets
        if try r.flag() { _ = try r.fixed64() }  // price
        _ = try r.string()  // rationale
        if try r.flag() { _ = try r.fixed64() }  // scheduled for
        let expiresAt = try r.flag() ? Timestamp(milliseconds: Int64(bitPattern: try r.fixed64())) : nil
        try r.skip(32)  // content hash
        var pinned: Stakes?
        if schemaVersion >= 2 {
            _ = try r.varint()  // rules version
            pinned = try Self.stakes(try r.u8(), &r)
        }
        return ProposalFacts(specialist: name, surface: surface, kind: kind, stakes: stakes, expiresAt: expiresAt,
                             pinnedStakes: pinned)
    }

    private static func stakes(_ b: UInt8, _ r: inout Walker) throws -> Stakes {
        switch b {
        case 0: return .low
        case 1: return .medium
        case 2: return .high
        default: throw r.fail("invalid stakes")
        }
    }
}

extension EventView.Walker {
    mutating func flag() throws -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        default: throw fail("invalid optional flag")
        }
    }

    mutating func skip(_ n: Int) throws {
        guard offset + n <= bytes.count else { throw fail("truncated") }
        offset += n
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0, shift: UInt64 = 0
        while true {
            let b = try u8()
            guard shift < 64 else { throw fail("varint overflow") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }
}
