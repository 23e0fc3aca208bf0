import Foundation

/// Runs the per-event hash (and deep decoding) checks of a log walk on worker threads,
/// while the walking thread does the cheap sequential checks. Each event's check needs
/// only its bytes and the previous event's *stored* hash, so events are independent;
/// when all pass, the stored hashes are the chain by induction from the zero hash.
///
/// Memory is bounded: at most ``maxInFlight`` batches of ``batchSize`` items exist.
/// The first failure *by seq* is reported, whatever order the workers finish in.
final class HashCheckPipeline: @unchecked Sendable {
    // Safe: `batch` is only touched by the walking thread; `failure` and `failureSeq` only
    // under `lock`; items point into a read transaction's map, which the walking thread
    // keeps open until `finish()` has waited for every worker (the group), and nobody
    // writes through them.

    struct Item: @unchecked Sendable {
        // Safe: see the class comment — read-only pointers into a live read transaction.
        let seq: UInt64
        let previous: Digest
        let stored: Digest
        let bytes: UnsafeRawBufferPointer
    }

    static let batchSize = 8192
    let maxInFlight: Int
    private let deep: Bool
    private let group = DispatchGroup()
    private let slots: DispatchSemaphore
    private let lock = NSLock()
    private var batch: [Item] = []
    private var failure: LedgerError?
    private var failureSeq = UInt64.max

    init(deep: Bool, workers: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.deep = deep
        maxInFlight = max(2, workers * 2)
        slots = DispatchSemaphore(value: maxInFlight)
        batch.reserveCapacity(Self.batchSize)
    }

    /// Queues one event's check.
    @inline(__always)
    func add(_ item: Item) {
        batch.append(item)
        if batch.count == Self.batchSize { flush() }
    }

    /// Whether some worker already found a failure (the walk may stop early).
    var hasFailed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return failure != nil
    }

    private func flush() {
        guard !batch.isEmpty else { return }
        let items = batch
        batch = []
        batch.reserveCapacity(Self.batchSize)
        slots.wait()
        let deep = self.deep
        DispatchQueue.global(qos: .userInitiated).async(group: group) { [self] in
            defer { slots.signal() }
            for item in items {
                do {
                    try ChainVerifier.checkHash(item.seq, previous: item.previous, stored: item.stored, bytes: item.bytes, deep: deep)
                } catch {
                    record(item.seq, error)
                    return  // later items of this batch have larger seqs
                }
            }
        }
    }

    private func record(_ seq: UInt64, _ error: Error) {
        lock.lock()
        defer { lock.unlock() }
        guard seq < failureSeq else { return }
        failureSeq = seq
        failure = (error as? LedgerError) ?? LedgerError(.integrityFailure, "seq \(seq): \(error)")
    }

    /// Waits for every queued check; throws the failure with the smallest seq, else
    /// `walkError` (a sequential check's failure, always at a larger seq than any queued).
    func finish(walkError: Error? = nil) throws {
        if walkError == nil { flush() } else { batch = [] }
        group.wait()
        if let failure { throw failure }
        if let walkError { throw walkError }
    }
}
