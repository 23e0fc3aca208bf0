import Foundation
import Testing
@testable import ActionLedger

// Shared by the writer's tests (GroupCommitTests, WriterHandOffTests).

/// A value shared between test threads.
final class Locked<T>: @unchecked Sendable {
    // Safe: every access to `stored` holds `lock`.
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func update(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}

/// Seqs 1...count with no gap, each hash chaining the previous one.
func expectDenseChain(_ l: Ledger, count: Int) throws {
    var previous = Digest.zero
    var seqs: [UInt64] = []
    try l.read { r in
        try r.forEachRaw { seq, value in
            seqs.append(seq)
            let stored = Digest(bytes: UnsafeRawBufferPointer(rebasing: value[0..<32]))!
            let computed = Digest.sha256(previous, UnsafeRawBufferPointer(rebasing: value[32...]))
            #expect(stored == computed, "seq \(seq) does not chain")
            previous = stored
            return true
        }
    }
    #expect(seqs == Array(1...UInt64(count)))
    #expect(try l.read { try $0.head() } == LogHead(seq: UInt64(count), hash: previous))
}
