import ActionLedger
import Foundation
import Hummingbird

/// The queries: an action, the statement to sign, Today and devices (the auditor's views: AuditRoutes).
/// Each reads one snapshot in a read-only transaction.
extension LedgerServer {
    func addReadRoutes(_ router: Router<APIContext>) {
        router.getAndHead("/v1/actions/:id") { _, context in
            let who = try context.require(.device, .specialist, .auditor)
            let id = try context.pathId("id")
            let now = try self.now()
            let (state, events, policy) = try self.ledger.read { r -> (ActionState?, [StoredEvent], PolicyDocument?) in
                guard let s = try r.actionState(id) else { return (nil, [], nil) }
                return (s, try r.actionEvents(id), try r.policy(org: s.org))
            }
            guard let state, let policy, Self.sees(who, state) else {
                throw LedgerError(.unknownAction, "no action \(id)", details: ["action_id": .string(id)])
            }
            return LedgerServer.json(["action": state.json(now: now, policy: policy), "events": .array(events.map(\.json)),
                                      "proofs": ProofSummary.list(events)],
                                     headers: [.eTag: "\"\(state.contentHash.hex)\""])
        }
        router.getAndHead("/v1/actions/:id/statement") { request, context in
            let who = try context.require(.device)
            let id = try context.pathId("id")
            _ = try self.action(id, visibleTo: who, org: who.org)
            let q = Query(request: request)
            guard let step = q.string("step").flatMap(Statement.Step.init(rawValue:)) else {
                throw Problem.invalid("step: expected review, confirm, approve, dismiss, edit or hold", field: "step")
            }
            let seen = try q.string("content_hash").map { h -> Digest in
                guard let d = Digest(hex: h) else { throw Problem.invalid("content_hash: expected 64 hex digits", field: "content_hash") }
                return d
            }
            let device = who.device!
            let command: Command
            switch step {
            case .review, .confirm, .approve: command = .tap(TapStep(rawValue: step.rawValue)!, actionId: id, device: device, seenContent: seen)
            case .dismiss: command = .dismiss(actionId: id, device: device, reason: q.string("reason") ?? "")
            case .edit: command = .edit(actionId: id, device: device, text: q.string("text") ?? "")
            case .hold:
                guard let until = try q.time("until") else { throw Problem.invalid("until is required for hold", field: "until") }
                command = .hold(actionId: id, device: device, until: until)
            }
            let commandId = q.string("command_id") ?? CommandRequest.newCommandId()
            if let bad = Identifier.problem(commandId) { throw Problem.invalid("command_id \(bad)", field: "command_id") }
            let claimed = try q.time("claimed_at") ?? self.now()
            let statement = try self.ledger.statement(for: command, commandId: commandId, claimedAt: claimed, contentHash: seen)
            let bytes = statement.bytes
            let sha = bytes.withUnsafeBytes { Digest.sha256($0) }
            var fields = JSONObject()
            fields["domain"] = .string(Statement.tapDomain)
            for line in statement.lines { fields[line.name] = .string(line.value) }
            return LedgerServer.json([
                "statement_hex": .string(Hex.encode(bytes)), "sha256": .string(sha.hex),
                // A WebAuthn client passes this as its challenge (base64url of the statement's SHA-256).
                "challenge": .string(Self.base64url(sha.bytes)), "command_id": .string(commandId),
                "claimed_at": .string(statement.claimedAt.iso8601), "content_hash": .string(statement.contentHash.hex),
                "fields": .object(fields),
            ])
        }
        router.getAndHead("/v1/today") { request, context in
            let who = try context.require(.device)
            let q = Query(request: request)
            let query = TodayQuery(person: who.person!, now: try self.now(), limit: try q.int("limit", default: 20, in: 1...1000),
                                   pageToken: q.string("page_token"))
            return LedgerServer.json(try self.ledger.query { try $0.today(query) }.json)
        }
        router.getAndHead("/v1/devices") { _, context in
            let who = try context.require(.device, .auditor)
            let records = try self.ledger.query { try $0.devices(person: who.person) }.filter { $0.org == who.org }
            return LedgerServer.json(["devices": .array(try records.map { d in
                guard case .object(var o) = d.json else { return d.json }
                o["org"] = .string(d.org)
                o["connected"] = .bool(self.hub.isConnected(d.device))
                o["last_connected_at"] = try self.sessions.lastConnected(device: d.device).map { .string($0.iso8601) } ?? .null
                o["last_tap_at"] = d.lastSeen.map { .string($0.iso8601) } ?? .null
                return .object(o)
            })])
        }
        addAuditRoutes(router)
    }

    /// `since=24h` (which wins over `from`/`to`), or `from`/`to` (ISO-8601), as the CLI's
    /// `--since`/`--from`/`--to`; `defaultSince` when none is given (nil: all time). An open start is the engine's
    /// earliest time (2000-01-01), never `Int64.min`, which no time format can print.
    func window(_ q: Query, defaultSince: Int64?) throws -> TimeWindow {
        let now = try self.now()
        let from = try q.time("from"), to = try q.time("to")
        if let since = try q.duration("since") {
            let w = TimeWindow.last(min(since, now.milliseconds - TimeRules.earliest.milliseconds), before: now)
            return TimeWindow(from: max(w.from, TimeRules.earliest), to: w.to)
        }
        if from == nil, to == nil {
            return defaultSince.map { .last($0, before: now) } ?? TimeWindow(from: TimeRules.earliest, to: TimeRules.latest)
        }
        // A window ending before it starts is empty, not an error: its listing is empty.
        return TimeWindow(from: from ?? TimeRules.earliest, to: to ?? now.adding(milliseconds: 1))
    }

    /// Whether `who` may read action `s`: its person's devices, its proposing agent, its org's auditors.
    static func sees(_ who: Identity, _ s: ActionState) -> Bool {
        guard s.org == who.org else { return false }
        switch who.scope {
        case .device: return s.person == who.person
        case .specialist: return s.proposal.specialist.agent == who.subject
        case .auditor: return true
        }
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
