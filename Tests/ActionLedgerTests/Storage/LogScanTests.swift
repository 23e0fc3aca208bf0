import Testing
@testable import ActionLedger

/// A read-only scan of the log reads a window of entries ahead of its caller (and prefetches
/// their pages); a write transaction's scan does not. Both must visit the same events with
/// the same bytes, start where asked, and stop where the caller stops, mid-window included.
@Suite struct LogScanTests {
    func scan(_ l: Ledger, writable: Bool, from: UInt64, until last: UInt64 = .max) throws -> [(UInt64, [UInt8])] {
        var seen: [(UInt64, [UInt8])] = []
        func visit(_ txn: Transaction) throws {
            try LogReader(txn: txn, dbs: l.dbs).forEachRaw(from: from) { seq, value in
                seen.append((seq, Array(value)))
                return seq < last
            }
        }
        if writable { try l.environment.write(visit) } else { try l.environment.read(visit) }
        return seen
    }

    @Test func aReadAheadScanVisitsWhatAWriteTransactionsScanVisits() throws {
        let t = try TempLedger()
        // Values of several sizes, one larger than a page (an overflow page).
        for i in 0..<45 {
            let text = i == 20 ? String(repeating: "x", count: 6_000) : String(repeating: "y", count: i * 17)
            try t.ledger.run(.propose(proposal("a\(i)", text: text)))
        }
        let head = try t.ledger.read { try $0.head().seq }
        #expect(head >= 45)
        let largest = try scan(t.ledger, writable: false, from: 1).map(\.1.count).max() ?? 0
        #expect(largest > t.ledger.environment.pageSize)

        for (from, last) in [(1, UInt64.max), (7, 30), (16, 16), (17, 33), (head, .max), (head + 1, .max)] as [(UInt64, UInt64)] {
            let ahead = try scan(t.ledger, writable: false, from: from, until: last)
            let plain = try scan(t.ledger, writable: true, from: from, until: last)
            #expect(ahead.map(\.0) == plain.map(\.0), "from \(from) until \(last)")
            #expect(ahead.map(\.1) == plain.map(\.1), "from \(from) until \(last)")
            let expected = from > head ? [] : Array(from...min(last, head))
            #expect(ahead.map(\.0) == expected, "from \(from) until \(last)")
        }
        #expect(try t.ledger.verify().checked == head)
    }
}
