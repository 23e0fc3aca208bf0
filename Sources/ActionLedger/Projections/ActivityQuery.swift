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
        let prefix = Keys.prefix(person)
        var start = prefix + Keys.u64(ProjectionKeys.timeBits(window.from))
        if let token = try pageToken.map({ try PageToken($0, length: 16) }) {
            let after = prefix + token.bytes + [0]
            if start.lexicographicallyPrecedes(after) { start = after }
        }
        var page = ActivityPage(person: person, items: [], nextPageToken: nil)
        try store.scan(0, from: start) { k, v in
            guard k.count == prefix.count + 16, ProjectionKeys.has(k, prefix: prefix),
                  ProjectionKeys.time(k, at: prefix.count) < window.to else { return false }
            let item = try ActivityItem(key: k, prefixLength: prefix.count, value: v)
            if let types, !types.contains(item.type) { return true }
            if page.items.count == limit {
                let last = page.items[limit - 1]
                page.nextPageToken = PageToken(Keys.u64(ProjectionKeys.timeBits(last.at)) + Keys.u64(last.seq)).description
                return false
            }
            page.items.append(item)
            return true
        }
        return page
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
