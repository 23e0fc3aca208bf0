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
    /// - parameter query: what the listing lists (``rowToken(at:seq:query:)``): a token
    ///   printed by another query, or naming no event of the log, is refused.
    /// - parameter row: whether a seq is a row of the listing: a token must name one. Its
    ///   tag binds it to the query, not to the rows, so without this a forged token naming
    ///   any seq would be accepted once its time matched, and the answers would tell another
    ///   org's auditor the times of events it may not see.
    func seqs(of window: TimeWindow, after pageToken: String? = nil, query: String = "",
              row: ((UInt64) throws -> Bool)? = nil) throws -> Range<UInt64> {
        let reader = LogReader(txn: txn, dbs: dbs)
        var first = window.from == TimeWindow.all.from ? 1 : try reader.firstSeq(atOrAfter: window.from)
        let end = window.to == TimeWindow.all.to ? try reader.head().seq + 1 : try reader.firstSeq(atOrAfter: window.to)
        if let text = pageToken {
            // A token is the last row's time ‖ seq ‖ the query's tag: the next page starts after that seq.
            let token = try PageToken(text, length: 16, tag: Self.queryTag(query))
            let (time, seq) = token.bytes.withUnsafeBytes { (Keys.readU64($0, at: 0), Keys.readU64($0, at: 8)) }
            guard seq >= 1, seq <= (try reader.head().seq), let at = try reader.time(of: seq),
                  ProjectionKeys.timeBits(at) == time, try row?(seq) ?? true else { throw PageToken.notPrinted(text) }
            first = max(first, seq + 1)
        }
        return first..<max(first, end)
    }

    /// The page token of a listing's last row: its time ‖ seq ‖ a tag of `query`.
    func rowToken(at: Timestamp, seq: UInt64, query: String = "") -> String {
        PageToken(Keys.u64(ProjectionKeys.timeBits(at)) + Keys.u64(seq) + Self.queryTag(query)).description
    }

    /// Eight bytes of SHA-256 of what a listing lists: a token works for that listing only.
    static func queryTag(_ query: String) -> [UInt8] {
        var q = query
        return Array(q.withUTF8 { Digest.sha256(UnsafeRawBufferPointer($0)) }.bytes.prefix(8))
    }
}
