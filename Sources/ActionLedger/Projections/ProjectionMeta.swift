/// A projection's bookkeeping in the log's `meta` database, under `projection/NAME` (live)
/// or `projection/NAME#rebuild` (a rebuild in progress): which generation (database) holds its
/// state and how far it got. (Its last 32 bytes, once a running digest, are reserved and
/// zero: digests are computed when a check needs them, never on the write path.)
public struct ProjectionMeta: Sendable, Equatable {
    public var version: UInt32
    /// Which LMDB database (`p/NAME/GEN`) holds the state; rebuilds write the other.
    public var generation: UInt8
    public var checkpoint: UInt64

    var encoded: [UInt8] {
        var w = BinaryWriter(capacity: 48)
        w.fixed64(UInt64(version))
        w.u8(generation)
        w.fixed64(checkpoint)
        w.digest(.zero)
        return w.bytes
    }

    init(version: UInt32, generation: UInt8, checkpoint: UInt64) {
        self.version = version
        self.generation = generation
        self.checkpoint = checkpoint
    }

    init(decoding b: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(b)
        version = UInt32(truncatingIfNeeded: try r.fixed64())
        generation = try r.u8()
        checkpoint = try r.fixed64()
        _ = try r.digest()
    }

    static func databaseName(_ projection: String, generation: UInt8) -> String {
        "p/\(projection)/\(generation)"
    }
}
