/// A page of a person's timeline.
public struct ActivityPage: Sendable {
    public var person: String
    public var items: [ActivityItem]
    public var nextPageToken: String?

    public var json: JSON {
        ["person": .string(person), "count": .number(Double(items.count)), "items": .array(items.map(\.json)),
         "next_page_token": nextPageToken.map(JSON.string) ?? .null]
    }
}

extension ProjectionSnapshot {
    /// `person`'s events in time order within `window`, only those of `types` when given.
    public func activity(person: String, types: Set<EventType>? = nil, in window: TimeWindow = .all,
                         limit: Int = 100, pageToken: String? = nil) throws -> ActivityPage {
        guard (1...100_000).contains(limit) else { throw LedgerError(.invalidInput, "limit must be 1…100000, got \(limit)") }
        let store = try store("activity")
        var start = ProjectionStore.Posting(window.from, 0)
        if let token = try pageToken.map({ try PageToken($0, length: 16) }) {
            let after = token.bytes.withUnsafeBytes { ProjectionStore.Posting($0) }
            if (start.timeBits, start.seq) <= (after.timeBits, after.seq) {
                start = ProjectionStore.Posting(timeBits: after.timeBits, seq: after.seq &+ 1)
            }
        }
        var page = ActivityPage(person: person, items: [], nextPageToken: nil)
        try store.postings(0, Array(person.utf8), from: start) { p in
            guard p.at < window.to else { return false }
            if let types, !types.contains(try loggedType(p.seq)) { return true }
            if page.items.count == limit {
                let last = page.items[limit - 1]
                page.nextPageToken = PageToken(Keys.u64(ProjectionKeys.timeBits(last.at)) + Keys.u64(last.seq)).description
                return false
            }
            page.items.append(ActivityItem(try loggedEvent(p.seq)))
            return true
        }
        return page
    }

    /// The type of event `seq`, read in place without decoding it.
    func loggedType(_ seq: UInt64) throws -> EventType {
        guard let type = try LogReader(txn: txn, dbs: dbs).withRawEvent(seq, { try EventView(stored: $0).type }) else {
            throw LedgerError(.projectionStale, "a projection names seq \(seq), which the log does not hold")
        }
        return type
    }

    /// Linked devices of `person` (every person's when nil), in id order.
    public func devices(person: String? = nil) throws -> [DeviceRecord] {
        let store = try store("devices")
        let prefix = person.map { Keys.prefix($0) } ?? []
        var out: [DeviceRecord] = []
        try store.scan(0, from: prefix.isEmpty ? nil : prefix) { k, v in
            guard ProjectionKeys.has(k, prefix: prefix) else { return false }
            out.append(try DeviceRecord(decoding: v))
            return true
        }
        return out
    }
}
