import Foundation

/// Runs the engine's synchronous calls off Swift's cooperative pool.
///
/// `Ledger.execute` blocks until its write transaction has committed (group commit: callers
/// wait on a semaphore while a leader commits), and LMDB write transactions must begin and
/// commit on one thread, never across an `await`. So each call runs whole on a Dispatch
/// thread and the handler awaits its result: the pool's few threads never block, and a
/// command already handed over finishes (and is acknowledged durable) even if the client
/// goes away or the server is shutting down.
enum Blocking {
    /// Many callers blocked in `execute` at once is what lets the writer group their commands
    /// into one commit. A concurrent Dispatch queue would not give that on Linux: its
    /// width is the core count (two here), and a thread blocked on the writer's semaphore
    /// does not make it start another. Serial queues are overcommit: each busy one gets a
    /// thread of its own, so up to `lanes` commands wait on the writer together.
    static let lanes = 64
    private static let queues = (0..<lanes).map { DispatchQueue(label: "ledger.serve.engine.\($0)", qos: .userInitiated) }
    private static let next = Locked(0)

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let queue = queues[next.withLock { n in
            n = (n + 1) % lanes
            return n
        }]
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// A value behind a lock, shared between request handlers and the stream hub.
final class Locked<Value>: @unchecked Sendable {
    // Safe: `value` is only read or written inside `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
