extension LogReader {
    /// The first seq whose event is at or after `time` (the head's seq + 1 when none). Event
    /// times never go backwards along the log (``AppendSession`` refuses one older than the
    /// head), so a binary search by seq finds it in log₂(head) reads.
    func firstSeq(atOrAfter time: Timestamp) throws -> UInt64 {
        var low: UInt64 = 1, high = try head().seq + 1
        while low < high {
            let mid = low + (high - low) / 2
            guard let at = try self.time(of: mid) else {
                throw LedgerError(.integrityFailure, "the log has no event \(mid) below its head")
            }
            if at < time { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

extension ProjectionSnapshot {
    /// The seqs of the events in `window` (from ≤ at < to), after the event a page token
    /// names when one is given. Posting lists hold seqs only: a listing walks its list
    /// from the range's start and stops at its end.
    func seqs(of window: TimeWindow, after pageToken: String? = nil) throws -> Range<UInt64> {
        let reader = LogReader(txn: txn, dbs: dbs)
        var first = window.from == TimeWindow.all.from ? 1 : try reader.firstSeq(atOrAfter: window.from)
        let end = window.to == TimeWindow.all.to ? try reader.head().seq + 1 : try reader.firstSeq(atOrAfter: window.to)
        if let token = try pageToken.map({ try PageToken($0, length: 16) }) {
            // A token is the last row's time ‖ seq: the next page starts after that seq. One
            // naming the last seq there can be is past every row (it must not wrap to seq 0).
            let last = token.bytes.withUnsafeBytes { Keys.readU64($0, at: 8) }
            first = last == .max ? end : max(first, last + 1)
        }
        return first..<max(first, end)
    }

    /// The page token of a listing's last row: its time ‖ seq.
    func rowToken(at: Timestamp, seq: UInt64) -> String {
        PageToken(Keys.u64(ProjectionKeys.timeBits(at)) + Keys.u64(seq)).description
    }
}
