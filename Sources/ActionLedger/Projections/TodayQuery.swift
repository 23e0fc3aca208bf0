/// What the Today feed is asked: whose, at which instant, which page.
public struct TodayQuery: Sendable {
    public var person: String
    /// Expiries and holds are judged at this instant; the auto-ship card is the 24 hours up to it.
    public var now: Timestamp
    /// Items per page (1…1000).
    public var limit: Int
    /// Skip this many items first (alternative to ``pageToken``).
    public var offset: Int
    /// Continue after the last item of an earlier page.
    public var pageToken: String?

    public init(person: String, now: Timestamp, limit: Int = 20, offset: Int = 0, pageToken: String? = nil) {
        self.person = person
        self.now = now
        self.limit = limit
        self.offset = offset
        self.pageToken = pageToken
    }
}

/// One action that needs its person now.
public struct TodayItem: Sendable, Equatable {
    public var actionId: String
    /// Effective stakes under the policy in force.
    public var stakes: Stakes
    public var nextTap: TapStep
    /// The proof the policy in force requires of that step (none, signed, signed_uv).
    public var nextProof: ProofRequirement
    /// Steps of the path the taps on the current content have made.
    public var tapsDone: Int
    public var tapsNeeded: Int
    public var proposal: Proposal
    public var proposedAt: Timestamp
    public var heldUntil: Timestamp?
    public var edits: Int
    public var seq: UInt64

    public var json: JSON {
        let p = proposal
        var preview: JSONObject = ["text": .string(p.preview.text), "assets": .number(Double(p.preview.assets))]
        if let price = p.preview.price { preview["price"] = .number(price) }
        return ["action_id": .string(actionId), "stakes": .string(stakes.rawValue), "next_tap": .string(nextTap.rawValue),
                "next_proof": .string(nextProof.rawValue),
                "taps_done": .number(Double(tapsDone)), "taps_needed": .number(Double(tapsNeeded)),
                "proposer_stakes": .string(p.stakes.rawValue),
                "specialist": ["name": .string(p.specialist.name), "agent": .string(p.specialist.agent)],
                "surface": .string(p.surface), "kind": .string(p.kind),
                "target": ["type": .string(p.target.type), "id": .string(p.target.id)],
                "preview": .object(preview), "confidence": .number(p.confidence), "why_now": .string(p.rationale),
                "proposed_at": .string(proposedAt.iso8601),
                "scheduled_for": p.scheduledFor.map { .string($0.iso8601) } ?? .null,
                "expires_at": p.expiresAt.map { .string($0.iso8601) } ?? .null,
                "held_until": heldUntil.map { .string($0.iso8601) } ?? .null,
                "edits": .number(Double(edits)), "content_hash": .string(p.contentHash.hex), "seq": .number(Double(seq))]
    }
}

/// Counts by kind: auto-ships, drafts.
public typealias KindCounts = [(kind: String, count: Int)]

func kindsJSON(_ counts: KindCounts) -> JSON {
    .object(JSONObject(counts.map { ($0.kind, .number(Double($0.count))) }))
}

/// The Today feed of one person at one instant.
public struct TodayFeed: Sendable {
    public var person: String
    public var now: Timestamp
    /// Everything that needs her (the headline), not just this page.
    public var count: Int
    public var items: [TodayItem]
    /// Pass as ``TodayQuery/pageToken`` for the next page; nil on the last.
    public var nextPageToken: String?
    /// What each specialist drafted that waits on her, most first.
    public var drafts: [(specialist: String, count: Int, byKind: KindCounts)]
    /// Auto-ships in the 24 hours up to `now` (`now − 24h < at ≤ now`).
    public var autoShipped: (count: Int, byKind: KindCounts)
    public var policyVersion: UInt32

    /// "4 things need you".
    public var headline: String {
        count == 0 ? "Nothing needs you" : "\(count) \(count == 1 ? "thing needs" : "things need") you"
    }

    public var json: JSON {
        ["person": .string(person), "now": .string(now.iso8601), "count": .number(Double(count)),
         "headline": .string(headline), "items": .array(items.map(\.json)),
         "next_page_token": nextPageToken.map(JSON.string) ?? .null,
         "drafts": .array(drafts.map { ["specialist": .string($0.specialist), "count": .number(Double($0.count)),
                                        "by_kind": kindsJSON($0.byKind)] }),
         "auto_shipped_24h": ["count": .number(Double(autoShipped.count)), "by_kind": kindsJSON(autoShipped.byKind)],
         "policy_version": .number(Double(policyVersion))]
    }
}

extension ProjectionSnapshot {
    /// The Today feed: pending actions of `person` not expired at `now` (expires_at > now)
    /// and not held past `now` (held_until ≤ now), high stakes first then oldest; one page
    /// of them, the headline count, drafts per specialist and the 24-hour auto-ship card.
    /// Cost: the person's pending actions plus her auto-ships of the last day.
    public func today(_ q: TodayQuery) throws -> TodayFeed {
        guard (1...1000).contains(q.limit) else { throw LedgerError(.invalidInput, "limit must be 1…1000, got \(q.limit)") }
        guard q.offset >= 0 else { throw LedgerError(.invalidInput, "offset must be ≥ 0") }
        let store = try store("today")
        var policies: [String: PolicyDocument] = [:]
        func policy(_ org: String) throws -> PolicyDocument {
            if let p = policies[org] { return p }
            let p = try TodayProjection.policy(store, org: org)
            policies[org] = p
            return p
        }
        // The proof table is read from the log's policy in force at the head (the projection
        // keeps only what its fold needs: raises and auto-ship settings).
        var proofTables: [String: PolicyDocument] = [:]
        func proofs(_ org: String) throws -> PolicyDocument {
            if let p = proofTables[org] { return p }
            let p = try LogReader(txn: txn, dbs: dbs).policy(org: org)
            proofTables[org] = p
            return p
        }
        let prefix = Keys.prefix(q.person)
        // A token is the last card's position ‖ a tag of the person: another person's feed
        // refuses it (it would silently hide her cards before that position).
        let tag = ProjectionSnapshot.queryTag("today/\(q.person)")
        let after = try q.pageToken.map { try PageToken($0, length: 17, tag: tag) }
        var feed = TodayFeed(person: q.person, now: q.now, count: 0, items: [], nextPageToken: nil, drafts: [],
                             autoShipped: (0, []), policyVersion: 0)
        var skipped = 0
        var lastKey: [UInt8]?
        var drafts: [String: [String: Int]] = [:]
        try store.scan(TodayProjection.feed, from: prefix) { k, v in
            guard ProjectionKeys.has(k, prefix: prefix), k.count == prefix.count + 17 else { return false }
            let entry = try TodayProjection.FeedEntry(decoding: v)
            guard entry.isDue(at: q.now) else { return true }
            feed.count += 1
            drafts[entry.specialist, default: [:]][entry.kind, default: 0] += 1
            let position = Array(k[prefix.count...])
            // At or before the token: an earlier page showed it.
            if let after, !after.bytes.lexicographicallyPrecedes(position) { return true }
            if skipped < q.offset {
                skipped += 1
                return true
            }
            if feed.items.count < q.limit {
                let item = try store.withValue(TodayProjection.items, key: Array(entry.actionId.utf8)) {
                    try TodayProjection.Item(decoding: $0)
                }
                guard let item else { throw LedgerError(.projectionStale, "feed entry for missing action \(entry.actionId)") }
                let inForce = try policy(item.org)
                feed.policyVersion = inForce.version
                let proposal = try currentProposal(item)
                let stakes = Policy.requirements(of: proposal, under: inForce).stakes
                let path = Policy.tapPath(for: stakes)
                // The engine's own rule for taps counted under other stakes (Policy.progress).
                let done = Policy.progress(item.steps.map { ActionState.TapRecord(step: $0, device: "", at: q.now, seq: 0) },
                                           along: path)
                let next = done < path.count ? path[done] : .approve
                feed.items.append(TodayItem(actionId: entry.actionId, stakes: stakes, nextTap: next,
                                            nextProof: try proofs(item.org).requiredProof(next, at: stakes),
                                            tapsDone: done, tapsNeeded: path.count, proposal: proposal,
                                            proposedAt: item.proposedAt, heldUntil: item.heldUntil, edits: item.edits,
                                            seq: item.seq))
                lastKey = position
            } else if feed.nextPageToken == nil, let lastKey {
                feed.nextPageToken = PageToken(lastKey + tag).description
            }
            return true
        }
        feed.drafts = drafts.map { name, kinds in
            (name, kinds.values.reduce(0, +), kinds.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
        // Her org's policy in force with no card shown too (a card's is hers: a person has one org).
        if feed.items.isEmpty, let org = try LogReader(txn: txn, dbs: dbs).personOrg(q.person) {
            feed.policyVersion = try policy(org).version
        }
        let card = try autoShipCounts(person: q.person, window: .last(Timestamp.day, before: q.now))
        feed.autoShipped = (card.reduce(0) { $0 + $1.count }, card)
        return feed
    }

    /// A pending item's proposal as it stands: read from the log, with its latest edit's content.
    private func currentProposal(_ item: TodayProjection.Item) throws -> Proposal {
        let log = LogReader(txn: txn, dbs: dbs)
        guard let stored = try log.event(item.seq), case .proposed(var p) = stored.event.payload else {
            throw LedgerError(.projectionStale, "today names seq \(item.seq), which is not a proposal")
        }
        if item.contentSeq != item.seq {
            guard let edit = try log.event(item.contentSeq), case .edited(let e) = edit.event.payload else {
                throw LedgerError(.projectionStale, "today names seq \(item.contentSeq), which is not an edit")
            }
            p.preview = e.preview
            p.contentHash = e.contentHash
        }
        return p
    }

    /// Auto-ships of `person` in `window`, counted by kind (kinds in name order).
    func autoShipCounts(person: String, window: TimeWindow) throws -> KindCounts {
        let store = try store("autoshipped")
        var counts: [String: Int] = [:]
        let range = try seqs(of: window)
        try store.postings(AutoShippedProjection.byPerson, Array(person.utf8), from: range.lowerBound) { seq in
            guard seq < range.upperBound else { return false }
            counts[try autoShipRecord(seq).kind, default: 0] += 1
            return true
        }
        return counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
