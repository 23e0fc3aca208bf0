extension DecisionReplay.Report {
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
