import Foundation

/// Computes a projection store's digest terms on another thread while the fold goes on.
///
/// A store's digest is a lane-wise sum of SHA-256 terms, one per entry added and one
/// subtracted per entry replaced or removed (``ProjectionStore``). A sum does not depend on
/// the order of its terms, so the folding thread need only copy each entry's bytes into a
/// chunk; a serial queue hashes whole chunks and keeps the running sum. SHA-256 is a large
/// share of a fold's CPU, and on a 2-core machine the other core does it. Used by rebuild
/// batches (10 000 events each by default); commits hash inline, as a commit's fold gains
/// nothing from the hand-off.
///
/// Memory is bounded: at most ``maxInFlight`` chunks of about ``chunkBytes`` exist.
final class DigestHasher: @unchecked Sendable {
    // Safe: `chunk` is only touched by the folding thread (the store's owner); `sum` only by
    // the serial `queue`'s work items, and read by the folding thread in `total()` only after
    // `group.wait()`, which orders it after every work item.

    static let chunkBytes = 256 << 10
    static let maxInFlight = 4
    private var chunk: [UInt8] = []
    private var sum = Digest.zero
    private let queue = DispatchQueue(label: "ActionLedger.digest")
    private let group = DispatchGroup()
    private let slots = DispatchSemaphore(value: DigestHasher.maxInFlight)

    init() {
        chunk.reserveCapacity(Self.chunkBytes + 512)
    }

    /// Queues the term of entry (`db`, `key`, `value`): added, or with `subtract` taken away.
    func term(_ db: Int, _ key: some Collection<UInt8>, _ value: some Collection<UInt8>, subtract: Bool) {
        // Record: sign, then the length (4 LE) of the bytes ``ProjectionStore/entryHash`` hashes
        // (db ‖ varint key length ‖ key ‖ value), then those bytes, so the queue hashes them
        // where they lie.
        var length = UInt64(key.count)
        var varint = 1
        while length >= 0x80 { varint += 1; length >>= 7 }
        chunk.append(subtract ? 1 : 0)
        withUnsafeBytes(of: UInt32(1 + varint + key.count + value.count).littleEndian) { chunk.append(contentsOf: $0) }
        chunk.append(UInt8(db))
        length = UInt64(key.count)
        while length >= 0x80 { chunk.append(UInt8(length & 0x7F) | 0x80); length >>= 7 }
        chunk.append(UInt8(length))
        chunk.append(contentsOf: key)
        chunk.append(contentsOf: value)
        if chunk.count >= Self.chunkBytes { flush() }
    }

    /// The sum of every term queued so far (waits for the queue to hash them).
    func total() -> Digest {
        flush()
        group.wait()
        return sum
    }

    private func flush() {
        guard !chunk.isEmpty else { return }
        let records = chunk
        chunk.removeAll(keepingCapacity: true)
        slots.wait()
        queue.async(group: group) { [self] in
            sum = Self.hash(records, into: sum)
            slots.signal()
        }
    }

    private static func hash(_ records: [UInt8], into start: Digest) -> Digest {
        var sum = start
        records.withUnsafeBytes { b in
            var i = 0
            while i < b.count {
                let subtract = b[i] == 1
                let n = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: i + 1, as: UInt32.self)))
                let h = Digest.sha256(UnsafeRawBufferPointer(rebasing: b[i + 5..<i + 5 + n]))
                sum = subtract ? sum.subtracting(h) : sum.adding(h)
                i += 5 + n
            }
        }
        return sum
    }
}
