extension ActionState {
    /// The action as `ledger show` and command results print it, at `now`, under `policy`:
    /// its own org's in force (``LogReader/policy(org:)``), as the engine judges it.
    public func json(now: Timestamp, policy: PolicyDocument) -> JSON {
        let next = Policy.nextTap(self, under: policy, now: now), stakes = Policy.requirements(of: proposal, under: policy).stakes
        var o: JSONObject = [
            "action_id": .string(actionId), "org": .string(org), "person": .string(person),
            "state": .string(displayState(now: now)),
            "next_tap": next.map { .string($0.rawValue) } ?? .null,
            // What the device's proof of that step must be (policy.md §2a), so a client knows before it signs.
            "next_proof": next.map { .string(policy.requiredProof($0, at: stakes).rawValue) } ?? .null,
            "stakes": .string(proposal.stakes.rawValue),
            // The stakes the engine judges by: the policy's raises, and never below those pinned
            // at the proposal (policy.md `stakes.pinned`).
            "effective_stakes": .string(stakes.rawValue),
            "specialist": ["name": .string(proposal.specialist.name), "agent": .string(proposal.specialist.agent)],
            "surface": .string(proposal.surface), "kind": .string(proposal.kind),
            "target": ["type": .string(proposal.target.type), "id": .string(proposal.target.id)],
            "confidence": .number(proposal.confidence), "preview": proposal.preview.json,
            "rationale": .string(proposal.rationale), "content_hash": .string(contentHash.hex),
            "proposed_at": .string(proposedAt.iso8601),
            "taps": .array(taps.map { t in
                ["step": .string(t.step.rawValue), "device": .string(t.device), "at": .string(t.at.iso8601),
                 "seq": .number(Double(t.seq))]
            }),
            "edits": .number(Double(edits)),
        ]
        // Absent values are null (queries.md, `--json`), as in Today's items: a client reads
        // one shape whichever route gave it the action.
        o["held_until"] = heldUntil.map { .string($0.iso8601) } ?? .null
        o["expires_at"] = proposal.expiresAt.map { .string($0.iso8601) } ?? .null
        o["scheduled_for"] = proposal.scheduledFor.map { .string($0.iso8601) } ?? .null
        o["decision"] = decision.map { d in
            ["type": .string(d.type.name), "actor": .string(d.actor), "device": d.device.map(JSON.string) ?? .null,
             "at": .string(d.at.iso8601), "seq": .number(Double(d.seq)),
             "policy_version": .number(Double(d.policyVersion)), "rule": .string(d.rule)]
        } ?? .null
        return .object(o)
    }
}

extension CommandResult {
    /// `{"command_id", "replayed", "duplicate_tap", "events": […], "action": {…}}`.
    public func json(now: Timestamp, policy: PolicyDocument) -> JSON {
        var o: JSONObject = [
            "command_id": .string(commandId), "replayed": .bool(replayed), "duplicate_tap": .bool(duplicateTap),
            "events": .array(events.map(\.json)),
        ]
        if let action { o["action"] = action.json(now: now, policy: policy) }
        return .object(o)
    }
}
