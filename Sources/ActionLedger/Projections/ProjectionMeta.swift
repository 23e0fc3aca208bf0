/// A projection's bookkeeping in the log's `meta` database, under `projection/NAME` (live)
/// or `projection/NAME#rebuild` (a rebuild in progress): which generation (database) holds its
/// state, how far it got, and the digest of that state.
public struct ProjectionMeta: Sendable, Equatable {
    public var version: UInt32
    /// Which LMDB database (`p/NAME/GEN`) holds the state; rebuilds write the other.
    public var generation: UInt8
    public var checkpoint: UInt64
    public var digest: Digest

    var encoded: [UInt8] {
        var w = BinaryWriter(capacity: 48)
        w.fixed64(UInt64(version))
        w.u8(generation)
        w.fixed64(checkpoint)
        w.digest(digest)
        return w.bytes
    }

    init(version: UInt32, generation: UInt8, checkpoint: UInt64, digest: Digest) {
        self.version = version
        self.generation = generation
        self.checkpoint = checkpoint
        self.digest = digest
    }

    init(decoding b: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(b)
        version = UInt32(truncatingIfNeeded: try r.fixed64())
        generation = try r.u8()
        checkpoint = try r.fixed64()
        digest = try r.digest()
    }

    static func databaseName(_ projection: String, generation: UInt8) -> String {
        "p/\(projection)/\(generation)"
    }
}
