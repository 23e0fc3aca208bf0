/// Key layouts shared by the standard projections. Every key sorts in LMDB's byte order
/// the way its queries read it: ids end in 0x00 (ids never contain it), numbers are
/// 8-byte big-endian, times are order-preserving (sign bit flipped, so that instants
/// before 1970 still sort first).
struct KeyBuilder {
    var bytes: [UInt8] = []

    init(capacity: Int = 48) { bytes.reserveCapacity(capacity) }

    /// An id followed by its 0x00 terminator.
    mutating func id(_ s: String) {
        bytes.append(contentsOf: s.utf8)
        bytes.append(0)
    }

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    mutating func u64(_ v: UInt64) {
        withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func time(_ t: Timestamp) { u64(ProjectionKeys.timeBits(t)) }
}

enum ProjectionKeys {
    /// Order-preserving 64-bit image of a timestamp.
    @inline(__always)
    static func timeBits(_ t: Timestamp) -> UInt64 { UInt64(bitPattern: t.milliseconds) ^ (1 << 63) }

    @inline(__always)
    static func time(_ b: UnsafeRawBufferPointer, at offset: Int) -> Timestamp {
        Timestamp(milliseconds: Int64(bitPattern: Keys.readU64(b, at: offset) ^ (1 << 63)))
    }

    /// `prefix ‖ time(at) ‖ seq`, the time-ordered key of the per-id indexes.
    static func timed(_ id: String?, _ at: Timestamp, _ seq: UInt64) -> [UInt8] {
        var k = KeyBuilder()
        if let id { k.id(id) }
        k.time(at)
        k.u64(seq)
        return k.bytes
    }

    /// Whether `key` starts with `prefix`.
    static func has(_ key: UnsafeRawBufferPointer, prefix: [UInt8]) -> Bool {
        key.count >= prefix.count && key.prefix(prefix.count).elementsEqual(prefix)
    }
}

/// A half-open time window `from ≤ at < to`, in milliseconds; every windowed query takes one.
public struct TimeWindow: Sendable, Equatable {
    public var from: Timestamp
    public var to: Timestamp

    public init(from: Timestamp, to: Timestamp) {
        self.from = from
        self.to = to
    }

    /// The `duration` up to and including `now`: `now − duration < at ≤ now`. An event
    /// exactly `duration` old has left the window; one at `now` is in it.
    public static func last(_ milliseconds: Int64, before now: Timestamp) -> TimeWindow {
        TimeWindow(from: now.adding(milliseconds: 1 - milliseconds), to: now.adding(milliseconds: 1))
    }

    /// All of time.
    public static let all = TimeWindow(from: Timestamp(milliseconds: .min), to: Timestamp(milliseconds: .max))

    public func contains(_ t: Timestamp) -> Bool { from <= t && t < to }
}
