/// How a recorded tap, dismissal, edit or hold is proven (Specs/statements.md §2.2),
/// derived from its stored event: no projection keeps it, so the audit output reads it
/// from the log by seq.
public struct ProofSummary: Sendable, Equatable {
    public var level: ProofLevel
    /// SHA-256 of the signing key's SPKI DER; nil for an unsigned step.
    public var keyFingerprint: Digest?
    /// Why `signed_uv` counts as user verification: `declared_key_protection` (a p256 proof
    /// by a key declared `user-verification`) or `webauthn_uv` (the authenticator's UV flag).
    public var userVerificationBasis: String?

    public init(level: ProofLevel, keyFingerprint: Digest? = nil, userVerificationBasis: String? = nil) {
        self.level = level
        self.keyFingerprint = keyFingerprint
        self.userVerificationBasis = userVerificationBasis
    }

    /// The names of ``jsonMembers``, in order.
    public static let memberNames = ["proof_level", "key_fingerprint", "uv_basis"]

    /// `proof_level`, `key_fingerprint` (null when unsigned), `uv_basis` (null below signed_uv).
    public var jsonMembers: [(String, JSON)] {
        [(Self.memberNames[0], .string(level.rawValue)), (Self.memberNames[1], keyFingerprint.map { .string($0.hex) } ?? .null),
         (Self.memberNames[2], userVerificationBasis.map(JSON.string) ?? .null)]
    }

    /// `row` (a JSON object: an audit entry, an activity item) with `proof`'s members
    /// appended, null members when no device made the event: one row shape for the CLI and
    /// the HTTP API (Specs/queries.md).
    public static func appending(_ proof: ProofSummary?, to row: JSON) -> JSON {
        guard case .object(var o) = row else { return row }
        for (k, v) in proof?.jsonMembers ?? memberNames.map({ ($0, JSON.null) }) { o[k] = v }
        return .object(o)
    }

    /// The proofs of `events`' device steps, as `show --json` and `GET /v1/actions/{id}` list
    /// them beside the events: seq, type, device, then the proof members.
    public static func list(_ events: [StoredEvent]) -> JSON {
        .array(events.compactMap { e in
            e.event.proofSummary.map { p in
                .object(JSONObject([("seq", .number(Double(e.event.seq))), ("type", .string(e.event.type.name)),
                                    ("device", e.event.device.map(JSON.string) ?? .null)] + p.jsonMembers))
            }
        })
    }

    /// `signed_uv, key 1a2b3c4d5e6f7a8b…` or `none`.
    public var text: String {
        level.rawValue + (keyFingerprint.map { ", key \($0.hex.prefix(16))…" } ?? "")
    }
}

extension Event {
    /// The proof of a tap, dismissal, edit or hold, of the step a `tap.refused` refused, or
    /// of a revocation she made from a device; nil for events no device makes.
    public var proofSummary: ProofSummary? {
        if case .deviceRevoked(let r) = payload {
            // Her device's user-verified key signed it (schema 2); a schema-1 one recorded nothing.
            guard device != nil else { return nil }
            return r.proof.map { ProofSummary(level: .signedUV, keyFingerprint: $0.keyFingerprint,
                                              userVerificationBasis: SignedProof.declaredKeyProtection) } ?? ProofSummary(level: .none)
        }
        guard let level = payload.proofLevel else { return nil }
        var proof = payload.proof
        if case .tapRefused(let r) = payload { proof = r.proof }
        return ProofSummary(level: level, keyFingerprint: proof?.keyFingerprint, userVerificationBasis: proof?.userVerificationBasis)
    }
}

/// `ledger audit proofs`: the decisions of a window by the proof level of the step that
/// decided them, and those resting on an assertion only.
public struct ProofReport: Sendable {
    /// A decision made by an unproven step (level `none` or `asserted`).
    public struct Unproven: Sendable, Equatable {
        public var seq: UInt64
        public var at: Timestamp
        public var type: EventType
        public var actionId: String
        public var person: String
        public var device: String?
        public var level: ProofLevel

        var json: JSON {
            ["seq": .number(Double(seq)), "at": .string(at.iso8601), "type": .string(type.name),
             "action_id": .string(actionId), "person": .string(person), "device": device.map(JSON.string) ?? .null,
             "proof_level": .string(level.rawValue)]
        }
    }

    public var window: TimeWindow
    /// Approvals and dismissals by the level of their own event.
    public var byLevel: [ProofLevel: Int] = [:]
    /// Auto-ships: decided by the policy, no device, no proof.
    public var autoShipped = 0
    /// This page's rows of the decisions an unproven step made, oldest first.
    public var unproven: [Unproven] = []
    /// This page's approvals that claim user verification their proof does not prove (a
    /// signature by a key not declared `user-verification`): signed, so not in ``unproven``,
    /// but the Face ID the policy's `user_verification.required` counted rests on the client's word.
    public var userVerificationUnproven: [Unproven] = []
    /// How many rows ``unproven`` and ``userVerificationUnproven`` hold over the whole window
    /// (every page): the counts above are the window's too, whatever the page.
    public var unprovenTotal = 0
    public var userVerificationUnprovenTotal = 0
    /// Pass as the page token for the rows after this page's (both lists, in log order);
    /// nil on the last page.
    public var nextPageToken: String?

    public var json: JSON {
        // All of time has no printable ends: null, whether given as `.all` or as the engine's
        // earliest and latest times (what an HTTP window without ends is).
        ["from": window.from <= TimeRules.earliest ? .null : .string(window.from.iso8601),
         "to": window.to >= TimeRules.latest ? .null : .string(window.to.iso8601),
         "decisions": .number(Double(byLevel.values.reduce(0, +) + autoShipped)),
         "by_level": .object(JSONObject(ProofLevel.allCases.map { ($0.rawValue, .number(Double(byLevel[$0] ?? 0))) })),
         "auto_shipped": .number(Double(autoShipped)),
         "unproven": .array(unproven.map(\.json)),
         "user_verification_unproven": .array(userVerificationUnproven.map(\.json)),
         "unproven_total": .number(Double(unprovenTotal)),
         "user_verification_unproven_total": .number(Double(userVerificationUnprovenTotal)),
         "next_page_token": nextPageToken.map(JSON.string) ?? .null]
    }

    /// What the report makes of `e`: nil when it is no decision; else the level it counts
    /// under and the list that names it (none when its proof holds).
    static func classify(_ e: Event) -> (level: ProofLevel?, row: Row?)? {
        switch e.payload {
        case .autoShipped: return (nil, nil)
        case .approved, .dismissed:
            let level = e.payload.proofLevel ?? .none
            if level == .none || level == .asserted { return (level, .unproven) }
            if case .approved(let a) = e.payload, a.userVerified, level != .signedUV { return (level, .userVerificationUnproven) }
            return (level, nil)
        default: return nil
        }
    }

    enum Row { case unproven, userVerificationUnproven }
}

extension Ledger {
    /// The proofs of the events at `seqs` that a device made (others are left out), from
    /// one snapshot of the log.
    public func proofSummaries(_ seqs: some Sequence<UInt64>) throws -> [UInt64: ProofSummary] {
        try read { r in
            var out: [UInt64: ProofSummary] = [:]
            for seq in seqs { if let p = try r.event(seq)?.event.proofSummary { out[seq] = p } }
            return out
        }
    }

    /// Scans the log (one snapshot) for the decisions recorded in `window`; only those of
    /// actions of `org` when given (an auditor's over HTTP). The counts are the window's; the
    /// two lists of unproven decisions are paged together, `limit` rows at a time in log
    /// order, after the row `pageToken` names (a decision listed by the same query).
    public func proofReport(in window: TimeWindow, org: String? = nil, limit: Int = 100,
                            pageToken: String? = nil) throws -> ProofReport {
        guard (1...100_000).contains(limit) else {
            throw LedgerError(.invalidInput, "limit must be 1…100000, got \(limit)", details: ["field": "limit"])
        }
        return try query { snapshot in
            let r = LogReader(txn: snapshot.txn, dbs: snapshot.dbs)
            let query = "proofs/" + (org ?? "")
            // A token must name a listed decision of this org's, as every listing's must.
            let listed = { (seq: UInt64) throws -> Bool in
                guard let e = try r.event(seq)?.event, org == nil || e.org == org else { return false }
                return ProofReport.classify(e)?.row != nil
            }
            let rows = try snapshot.seqs(of: window, after: pageToken, query: query, row: listed)
            var report = ProofReport(window: window)
            let orgBytes = org.map { Array($0.utf8) }
            // Times never go back along the log: the window starts at a seq (no scan before it).
            let start = try r.firstSeq(atOrAfter: max(window.from, TimeRules.earliest))
            // The window's counts: those taken to an earlier head of this same log, plus what
            // was appended since (ProofCounts), else counted from the window's start.
            let head = try r.head(), key = ProofCountCache.Query(from: window.from, to: window.to, org: org)
            var counts = ProofCounts(), countFrom = start
            // The stored value starts with the chain hash: compared in place, no decode.
            if let kept = proofCounts.entry(key), kept.head.seq <= head.seq,
               try r.withRawEvent(kept.head.seq, { Digest(bytes: UnsafeRawBufferPointer(rebasing: $0.prefix(Digest.byteCount))) })
                   == kept.head.hash {
                counts = kept.counts
                countFrom = max(start, kept.head.seq + 1)
            }
            // Read in place: only decisions of the org are decoded.
            try r.forEachView(from: countFrom) { view, decode in
                // Engine times never go back along the log: past the window, nothing more is in it.
                if view.at >= window.to { return false }
                try counts.count(view, decode, window: window, org: orgBytes)
                return true
            }
            proofCounts.store(.init(head: head, counts: counts), for: key)
            report.byLevel = counts.byLevel
            report.autoShipped = counts.autoShipped
            report.unprovenTotal = counts.unprovenTotal
            report.userVerificationUnprovenTotal = counts.userVerificationUnprovenTotal
            // This page's rows, from the seq after the token's.
            var last: Event?
            try r.forEachView(from: max(start, rows.lowerBound)) { view, decode in
                guard view.seq < rows.upperBound, view.at < window.to else { return false }
                guard view.type == .actionApproved || view.type == .actionDismissed,
                      ProofCounts.isIn(view, window, org: orgBytes) else { return true }
                let e = try decode()
                guard let (level, kind) = ProofReport.classify(e), let level, let kind else { return true }
                if report.unproven.count + report.userVerificationUnproven.count == limit {
                    // A full page gets a token only once another row follows it.
                    if let last { report.nextPageToken = snapshot.rowToken(at: last.at, seq: last.seq, query: query) }
                    return false
                }
                let row = ProofReport.Unproven(seq: e.seq, at: e.at, type: e.type, actionId: e.actionId ?? "",
                                               person: e.person, device: e.device, level: level)
                if kind == .unproven { report.unproven.append(row) } else { report.userVerificationUnproven.append(row) }
                last = e
                return true
            }
            return report
        }
    }
}
