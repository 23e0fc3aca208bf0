/// A page of a person's timeline.
public struct ActivityPage: Sendable {
    public var person: String
    public var items: [ActivityItem]
    public var nextPageToken: String?

    public var json: JSON {
        ["person": .string(person), "count": .number(Double(items.count)), "items": .array(items.map(\.json)),
         "next_page_token": nextPageToken.map(JSON.string) ?? .null]
    }

    /// The page's JSON with each item's proof members (queries.md: `proof_level`,
    /// `key_fingerprint`, `uv_basis`), as the CLI and the HTTP route both answer it;
    /// `proofs` from ``Ledger/proofSummaries(_:)`` over the items' seqs.
    public func json(proofs: [UInt64: ProofSummary]) -> JSON {
        guard case .object(var o) = json else { return json }
        o["items"] = .array(items.map { ProofSummary.appending(proofs[$0.seq], to: $0.json) })
        return .object(o)
    }
}

extension ProjectionSnapshot {
    /// `person`'s events in time order within `window`, only those of `types` when given, and
    /// only those recorded under `org` when given (an auditor's view: a person id such as the
    /// operator's may be named by events of several orgs).
    public func activity(person: String, types: Set<EventType>? = nil, in window: TimeWindow = .all,
                         limit: Int = 100, pageToken: String? = nil, org: String? = nil) throws -> ActivityPage {
        guard (1...100_000).contains(limit) else { throw LedgerError(.invalidInput, "limit must be 1…100000, got \(limit)") }
        let store = try store("activity")
        let query = "activity/\(person)/" + (types.map { $0.map(\.name).sorted().joined(separator: ",") } ?? "all")
        let range = try seqs(of: window, after: pageToken, query: query) { seq in
            try store.hasPosting(0, Array(person.utf8), seq) && (types?.contains(try self.loggedType(seq)) ?? true)
                && (try org.map { try self.loggedOrg(seq, is: $0) } ?? true)
        }
        var page = ActivityPage(person: person, items: [], nextPageToken: nil)
        try store.postings(0, Array(person.utf8), from: range.lowerBound) { seq in
            guard seq < range.upperBound else { return false }
            if let types, !types.contains(try loggedType(seq)) { return true }
            if let org, try !loggedOrg(seq, is: org) { return true }
            if page.items.count == limit {
                let last = page.items[limit - 1]
                page.nextPageToken = rowToken(at: last.at, seq: last.seq, query: query)
                return false
            }
            page.items.append(ActivityItem(try loggedEvent(seq)))
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
