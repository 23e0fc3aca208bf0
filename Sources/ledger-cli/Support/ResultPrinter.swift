import ActionLedger

/// Prints a command's result: the JSON form with `--json`, else one line per event (escaped: ``Human``).
enum ResultPrinter {
    static func print(_ result: CommandResult, ledger: Ledger, now: Timestamp, json: Bool) throws {
        // The action's own org's policy: the one the engine judged it by.
        let policy = try ledger.read { r in try result.action.map { try r.policy(org: $0.org) } ?? r.policy() }
        if json {
            Output.json(result.json(now: now, policy: policy))
            return
        }
        if result.replayed {
            Human.line("↺ command \(result.commandId) already ran: nothing appended; its events were:")
        }
        if result.duplicateTap {
            Human.line("= tap already counted on this content: nothing appended")
        }
        for e in result.events { Human.line(describe(e.event)) }
        if let a = result.action {
            let next = Policy.nextTap(a, under: policy, now: now).map { "next tap: \($0.rawValue)" } ?? "no tap needed"
            Human.line("  \(a.actionId) is \(a.displayState(now: now)); \(next)")
        }
    }

    /// `#12 09:14:03 action.approved a1 by quinn on laptop-1 (medium.two_taps, policy v1)`.
    static func describe(_ e: Event) -> String {
        var s = "#\(e.seq) \(e.at.iso8601) \(e.type.name)"
        if let a = e.actionId { s += " \(a)" }
        s += " by \(e.actor)"
        if let d = e.device { s += " on \(d)" }
        switch e.payload {
        case .approved(let a): s += " (\(a.rule), policy v\(a.policyVersion)\(a.userVerificationText.map { ", " + $0 } ?? ""))"
        case .autoShipped(let a): s += " (\(a.rule), policy v\(a.policyVersion), confidence \(a.confidence))"
        case .dismissed(let d): s += d.reason.isEmpty ? "" : " (\(d.reason))"
        case .held(let h): s += " until \(h.until.iso8601)"
        case .deviceLinked(let d):
            s += ": \(d.device) \"\(d.label)\" (\(d.platform.rawValue)) for \(e.person)" + (d.key.map { ", key \($0.trustText)" } ?? "")
        case .recoveryKeySet(let r): s += ": \(e.person)'s recovery key \(r.key.fingerprint.hex.prefix(16))… (\(r.trustText))"
        case .deviceRevoked(let d): s += ": \(d.device)\(d.reason.isEmpty ? "" : " (\(d.reason))")"
        case .deviceKeyRotated(let k):
            s += ": \(k.device) key \(k.key.fingerprint.hex.prefix(16))… in place of \(k.previousFingerprint.hex.prefix(16))…"
                + " (signed by \(k.key.introducer ?? "?"))"
        case .tapRefused(let t): s += ": \(t.step.rawValue) refused (\(t.code)), proof \(t.proof.level.rawValue)"
        case .relyingParty(let rp): s += ": rp \(rp.rpId), origins \(rp.origins.joined(separator: " "))"
        case .policySet(let p): s += ": version \(p.version)"
        default: break
        }
        return s
    }
}
