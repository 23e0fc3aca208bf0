/// An event as read from the log, with its chain hash.
public struct StoredEvent: Sendable, Equatable {
    public var event: Event
    /// SHA-256(previous hash ‖ canonical bytes).
    public var hash: Digest

    public var seq: UInt64 { event.seq }

    /// The JSON form with `"hash"` (log, export).
    public var json: JSON { event.json(hash: hash) }
}

/// The position and hash of the last event.
public struct LogHead: Sendable, Equatable {
    public var seq: UInt64
    public var hash: Digest
    public static let empty = LogHead(seq: 0, hash: .zero)
}
