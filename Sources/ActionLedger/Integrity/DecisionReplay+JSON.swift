extension DecisionReplay.Report {
    /// The report as one org's auditor sees it: that org's counts; whether the whole log
    /// replays (it is one chain); a mismatch's details only when the event is the org's.
    public func scoped(to org: String) -> DecisionReplay.Report {
        var r = DecisionReplay.Report()
        let mine = byOrg[org] ?? OrgCounts()
        (r.eventsJudged, r.decisionsConfirmed, r.byRule, r.lastSeq) = (mine.eventsJudged, mine.decisionsConfirmed, mine.byRule, lastSeq)
        r.byOrg = [org: mine]
        if let m = mismatch {
            r.mismatch = m.org == nil || m.org == org ? m
                : DecisionReplay.Mismatch(seq: 0, rule: "other_org", code: nil,
                                          message: "an event of another org does not replay; the operator's `ledger audit replay` names it")
        }
        return r
    }

    /// `{"ok", "events_judged", "decisions_confirmed", "by_rule", "from_seq", "last_seq"[, "mismatch"]}`:
    /// what `ledger audit replay --json` prints and `GET /v1/audit/replay` answers.
    public func json(from: UInt64) -> JSON {
        let rules = byRule.sorted { $0.key < $1.key }
        var o: JSONObject = ["ok": .bool(mismatch == nil), "events_judged": .number(Double(eventsJudged)),
                             "decisions_confirmed": .number(Double(decisionsConfirmed)),
                             "by_rule": .object(JSONObject(rules.map { ($0.key, JSON.number(Double($0.value))) })),
                             "from_seq": .number(Double(from)), "last_seq": .number(Double(lastSeq))]
        if let m = mismatch {
            o["mismatch"] = ["seq": .number(Double(m.seq)), "rule": .string(m.rule),
                             "code": m.code.map(JSON.string) ?? .null, "message": .string(m.message)]
        }
        return .object(o)
    }
}
