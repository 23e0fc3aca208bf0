/// The fields of an event that the log's indexes derive from, read without its payload
/// (but for a device event's device, the payload's first field).
struct IndexedFields {
    let type: EventType
    let seq: UInt64
    let at: Timestamp
    let commandId: String
    let person: String
    let org: String
    let actionId: String?
    let device: String?
    /// The envelope's device: the one that acted.
    let actingDevice: String?

    init(_ bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        _ = try r.u8()
        let code = try r.u8()
        guard let type = EventType(rawValue: code) else { throw r.fail("unknown event type code \(code)") }
        self.type = type
        _ = try r.u8()
        seq = try r.fixed64()
        at = try r.timestamp()
        _ = try r.string()  // actor
        actingDevice = try r.optional { try $0.string() }
        commandId = try r.string()
        org = try r.string()
        person = try r.string()
        actionId = try r.optional { try $0.string() }
        device = type == .deviceLinked || type == .deviceRevoked || type == .deviceKeyRotated ? try r.string() : nil
    }
}
