import ActionLedger
import Foundation
import HTTPTypes
import Hummingbird

/// `POST /v1/actions`, the taps and changes, and outcomes: each one command on the writer.
extension LedgerServer {
    func addActionRoutes(_ router: Router<APIContext>) {
        router.post("/v1/actions") { request, context in
            let who = try context.require(.specialist)
            guard let body = try await LedgerServer.body(request, context) else { throw Problem.invalid("a proposal JSON body is required") }
            let input = try ProposalInput(json: body)
            guard input.org == who.org else {
                throw LedgerError(.orgMismatch, "this token works in org \(who.org), not \(input.org)",
                                  details: ["field": "org", "person": .string(input.person), "org": .string(input.org)])
            }
            guard input.proposal.specialist.agent == who.subject else {
                throw Problem.forbidden("this token proposes as agent \(who.subject ?? "")")
            }
            // A person is bound to the org of the first event naming her (policy.md §1): a
            // specialist's proposal is never that event, or any org's token could claim another
            // org's people, and with them what its auditor may read. An operator enrols her
            // (`ledger devices link`, or a proposal on the CLI).
            guard try self.ledger.read({ try $0.personOrg(input.person) }) == who.org else {
                throw LedgerError(.orgMismatch, "person \(input.person) is not enrolled in org \(who.org): an operator links "
                    + "her device there first", details: ["person": .string(input.person), "org": .string(who.org)])
            }
            let key = try LedgerServer.idempotencyKey(request)
            // Both name the command id: two different ones are refused, as the CLI refuses them (the body's had been dropped).
            if let key, let inBody = input.commandId, key != inBody {
                throw Problem.invalid("Idempotency-Key \(key) differs from the proposal's command_id \(inBody)", field: "command_id")
            }
            return try await self.run(as: who, CommandRequest(.propose(input), commandId: key ?? input.commandId, now: try self.now()),
                                      status: .created)
        }
        for step in Statement.Step.allCases {
            router.post("/v1/actions/:id/\(step.rawValue)") { request, context in
                let who = try context.require(.device)
                let id = try context.pathId("id")
                // An unknown action is named before the body is judged: a retry learns the real problem.
                _ = try self.action(id, visibleTo: nil, org: who.org)
                // Each step's own fields (openapi: TapBody, DismissBody, EditBody, HoldBody): another
                // step's field is refused, not ignored (an edit posted to /review records no review).
                let own: [String] = switch step {
                case .review, .confirm, .approve: ["user_verified"]
                case .dismiss: ["reason"]
                case .edit: ["text"]
                case .hold: ["until"]
                }
                let f = try Fields(try await LedgerServer.body(request, context), allowed: Set(["proof", "claimed_at", "content_hash"] + own))
                let seen = try LedgerServer.seenContent(request, f)
                let device = who.device!
                let command: Command
                switch step {
                case .review, .confirm, .approve:
                    command = .tap(TapStep(rawValue: step.rawValue)!, actionId: id, device: device,
                                   userVerified: try f.bool("user_verified") ?? false, seenContent: seen)
                case .dismiss: command = .dismiss(actionId: id, device: device, reason: try f.string("reason") ?? "")
                case .edit: command = .edit(actionId: id, device: device, text: try f.require("text", f.string))
                case .hold: command = .hold(actionId: id, device: device, until: try f.require("until", f.time))
                }
                if step == .dismiss || step == .edit || step == .hold, let seen, f.raw("proof") == nil,
                   try !self.isRegistered(LedgerServer.idempotencyKey(request)) {
                    // (A retry of a command the engine registered is answered as it was: an
                    // edit's own retry would otherwise find the content it changed, stale.)
                    try self.requireSeenContent(seen, on: id, from: device)
                }
                var proof: ProofInput?
                if let p = f.raw("proof") {
                    proof = try ProofInput(json: p, claimedAt: try f.require("claimed_at", f.time), contentHash: seen)
                } else if f.raw("claimed_at") != nil {
                    // A time claimed for no proof would be dropped unread: refused, as the CLI refuses it.
                    throw Problem.invalid("claimed_at goes with a proof", field: "claimed_at")
                }
                let commandId = try LedgerServer.idempotencyKey(request) ?? CommandRequest.newCommandId()
                return try await self.run(as: who, CommandRequest(command, commandId: commandId, now: try self.now(), actor: "person", proof: proof))
            }
        }
        router.post("/v1/actions/:id/outcome") { request, context in
            let who = try context.require(.specialist)
            let id = try context.pathId("id")
            let state = try self.action(id, visibleTo: nil, org: who.org)
            let f = try Fields(try await LedgerServer.body(request, context, depthLimit: JSONParser.maxDepth + 1), allowed: ["status", "outcome"])
            let status = try f.require("status", f.string)
            guard status == "executed" || status == "failed" else { throw Problem.invalid("status: expected executed or failed", field: "status") }
            guard state.proposal.specialist.agent == who.subject else {
                throw Problem.forbidden("action \(id) was proposed by another agent; only its proposer records its outcome")
            }
            let commandId = try LedgerServer.idempotencyKey(request) ?? CommandRequest.newCommandId()
            let command = Command.recordOutcome(actionId: id, succeeded: status == "executed", outcome: f.raw("outcome") ?? .object(JSONObject()))
            return try await self.run(as: who, CommandRequest(command, commandId: commandId, now: try self.now(), actor: "specialist:\(who.subject!)"))
        }
    }

    /// Runs one command on the writer and answers with its result: `status` for a new
    /// result, the same for a replay (with `Idempotent-Replayed: true`).
    ///
    /// The engine judges whether a command id is a replay (same command, same device); the
    /// response it first got is kept in the session file for the retention
    /// (``Configuration/responseRetention``), so a replay gets exactly the original body. A
    /// replay after that, or of a command first made through the CLI, appends nothing too and
    /// gets the result as the engine replays it: the command's events, the action as it is now.
    /// - parameter gated: the route already holds ``commandGate`` for the command id
    ///   (``keptReplay(_:isOwn:)``'s routes take it before they spend a single-use input).
    /// Runs `request` for the caller `who`: under a token, the writer refuses it if the token
    /// was revoked since the caller was authenticated (``TokenAuthority``), a 401 as at the door.
    func run(as who: Identity, _ request: CommandRequest, status: HTTPResponse.Status = .ok, gated: Bool = false) async throws -> Response {
        var authorised = request
        authorised.authority = who.authority
        let request = authorised
        // A replay sent while the first request runs waits for it, then gets its kept response.
        if !gated { await commandGate.enter(request.commandId) }
        defer { if !gated { commandGate.leave(request.commandId) } }
        let ledger = self.ledger, sessions = self.sessions
        // Said to the other server processes until its response is kept (or it fails). One
        // running the same key now goes first (up to the wait): were this one to commit first,
        // that one would find a replay with nothing kept and nothing running.
        var announced = sessions.runs(request.commandId)
        if !announced {
            await waitWhileRunningElsewhere(request.commandId)
            announced = sessions.runs(request.commandId)
        }
        defer { if announced { sessions.ran(request.commandId) } }
        let result: CommandResult
        do {
            result = try await Blocking.run { try ledger.execute(request) }
        } catch let e as LedgerError where e.code == .unknownToken && request.authority != nil {
            throw Problem.unauthorized("the token is unknown, expired or revoked")
        } catch let e as LedgerError where e.details["recorded_seq"] != nil {
            // A refusal recorded as tap.refused registered the command id: its replay gets the
            // first problem document again, byte for byte, as any replayed result does. Only
            // that document: a response kept under the id for anything else (another caller's
            // command that registered nothing, in a file an older build wrote) is not this one's.
            // A replay may come from another server process than the one that recorded it,
            // before that one kept its document: waited for as any replay is.
            let replay = e.details["replayed"] == .bool(true)
            if let stored = replay ? try await keptResponse(request.commandId, now: request.now)
                                   : try sessions.response(commandId: request.commandId, now: request.now),
               stored.status >= 400, stored.body["recorded_seq"] == e.details["recorded_seq"] {
                return Self.replayed(stored)
            }
            let problem = Problem(e)
            let id = request.commandId, now = request.now
            // Kept only where nothing is: a replay's document never replaces the first one's.
            try await Blocking.run {
                try sessions.keep(SessionStore.StoredResponse(status: problem.status.code, etag: nil, body: problem.json),
                                  commandId: id, at: now, ifAbsent: true)
            }
            throw problem
        }
        if result.replayed, let stored = try await keptResponse(request.commandId, now: request.now) {
            return Self.replayed(stored)
        }
        if !result.replayed && !result.events.isEmpty { metrics.commits.increment() }
        let policy = try ledger.read { r in try result.action.map { try r.policy(org: $0.org) } ?? r.policy() }
        var headers: HTTPFields = [:]
        let etag = result.action.map { "\"\($0.contentHash.hex)\"" }
        if let etag { headers[.eTag] = etag }
        let body = result.json(now: request.now, policy: policy)
        if result.replayed {
            headers[.idempotentReplayed] = "true"
        } else if !result.events.isEmpty {
            // Kept only for a command the engine registered: a duplicate tap appends nothing
            // and registers no id, so its id stays free and nothing is kept under it.
            // The command is durable now: a response that cannot be kept (a full disk) is logged,
            // and its answer still given; a retry with the id is answered by the engine's replay.
            let id = request.commandId, now = request.now
            do {
                try await Blocking.run {
                    try sessions.keep(SessionStore.StoredResponse(status: status.code, etag: etag, body: body), commandId: id, at: now)
                }
            } catch {
                logger.warning("committed \(id), but its response could not be kept for replays: \(error)")
            }
        }
        return LedgerServer.json(body, status: status, headers: headers)
    }

    /// The response kept for `commandId`. A command another server process is running (it
    /// committed, and has not kept its response yet: ``SessionStore/runsElsewhere(_:)``) is
    /// waited for, up to ``keptResponseWait``, so both copies of a request sent at once to two
    /// servers get the same body. Any other (kept long ago, expired, made through the CLI,
    /// or its server gone) is answered at once.
    func keptResponse(_ commandId: String, now: Timestamp) async throws -> SessionStore.StoredResponse? {
        await waitWhileRunningElsewhere(commandId)
        return try sessions.response(commandId: commandId, now: now)
    }

    /// Waits while another server process runs `commandId`, up to ``keptResponseWait``.
    private func waitWhileRunningElsewhere(_ commandId: String) async {
        var waited: Int64 = 0
        while sessions.runsElsewhere(commandId), waited < Self.keptResponseWait {
            // Cancelled (a shutdown): the caller goes on, never a 500.
            guard (try? await Task.sleep(for: .milliseconds(10))) != nil else { return }
            waited += 10
        }
    }

    /// How long a replay of a command another server is running waits for its kept response (ms).
    static let keptResponseWait: Int64 = 2000

    /// If-Match on an unsigned change (a signed one carries the hash into the engine, which
    /// judges it as policy.md §3 orders, recording a verified stale one as `tap.refused`).
    /// Taps carry the hash into the engine too; a change has no field for it, so it is judged
    /// here, where the engine would judge content: after every check it makes first. Only
    /// an unkeyed device of the action's own person, on an action that may still be
    /// decided, is answered `stale_content`; anyone else gets the engine's refusal
    /// (`device_not_owned`, `proof_required`, `already_decided`, `action_expired`), and
    /// never the content's hash.
    /// Whether the engine registered `commandId` (it answers a retry of that command as a replay).
    func isRegistered(_ commandId: String?) throws -> Bool {
        guard let commandId else { return false }
        return try ledger.read { try $0.command(commandId) } != nil
    }

    func requireSeenContent(_ seen: Digest, on id: String, from device: String) throws {
        let now = try self.now()
        try ledger.read { r in
            guard let s = try r.actionState(id), let d = try r.deviceState(device), d.person == s.person, d.revokedAt == nil,
                  d.key == nil, s.decision == nil, s.status == .pending, !(s.proposal.expiresAt.map { $0 <= now } ?? false),
                  s.contentHash != seen else { return }
            throw LedgerError(.staleContent, "the action's content changed since \(seen.hex)",
                              details: ["current_content_hash": .string(s.contentHash.hex)])
        }
    }

    /// The action `id` of `org` (and visible to `who`, when given).
    /// - throws: `unknown_action` otherwise, so nothing about other orgs' actions leaks.
    func action(_ id: String, visibleTo who: Identity?, org: String) throws -> ActionState {
        guard let s = try ledger.read({ try $0.actionState(id) }), s.org == org, who.map({ Self.sees($0, s) }) ?? true else {
            throw LedgerError(.unknownAction, "no action \(id)", details: ["action_id": .string(id)])
        }
        return s
    }

    /// `Idempotency-Key`: the command id (an identifier, Specs/events.md).
    /// The response kept for the request's `Idempotency-Key`, when the engine registered the
    /// key to an event `isOwn` accepts (the caller's own earlier request). For the routes whose
    /// single-use input (a pairing code, a challenge) the first request spent: their replay is
    /// answered before that input is judged again. Nil: judge the request. The caller holds
    /// ``commandGate`` for the key, so a copy sent while the first runs waits for its answer.
    func keptReplay(_ request: Request, isOwn: @escaping @Sendable (Event) -> Bool) async throws -> Response? {
        guard let key = try Self.idempotencyKey(request) else { return nil }
        let ledger = ledger, sessions = sessions, now = try now()
        let stored = try await Blocking.run { () -> SessionStore.StoredResponse? in
            guard let first = try ledger.read({ r in try r.command(key).flatMap { try r.event($0.first) } }),
                  isOwn(first.event) else { return nil }
            return try sessions.response(commandId: key, now: now)
        }
        return stored.map(Self.replayed)
    }

    /// For a request with something single use to spend (a pairing code, a challenge), asked
    /// after ``keptReplay(_:isOwn:)`` found no kept response: the first event of the command
    /// its Idempotency-Key names when that is the caller's own (a replay after the 7 days:
    /// the route rebuilds its command from the event, and the engine answers it as a
    /// replay), nil for a key never used.
    /// - throws: `invalid_input` for a key another command used, before anything is spent: the
    ///   code or challenge would otherwise be gone for a refusal that says nothing of it.
    func ownCommand(_ key: String?, isOwn: @escaping @Sendable (Event) -> Bool) async throws -> Event? {
        guard let key else { return nil }
        let ledger = ledger
        guard let first = try await Blocking.run({ try ledger.read { r in try r.command(key).flatMap { try r.event($0.first) }?.event } })
        else { return nil }
        guard isOwn(first) else {
            throw LedgerError(.invalidInput, "Idempotency-Key \(key) was already used by another command", details: ["field": "Idempotency-Key"])
        }
        return first
    }

    /// A kept response answered again, byte for byte, with `Idempotent-Replayed: true`: a
    /// problem document as one, anything else as JSON.
    static func replayed(_ stored: SessionStore.StoredResponse) -> Response {
        var headers: HTTPFields = [.idempotentReplayed: "true", .cacheControl: "no-store",
                                   .contentType: stored.status >= 400 ? "application/problem+json" : "application/json"]
        if let etag = stored.etag { headers[.eTag] = etag }
        return Response(status: .init(code: stored.status), headers: headers,
                        body: .init(byteBuffer: ByteBuffer(string: stored.body.serialized())))
    }

    static func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        if let bad = Identifier.problem(key) { throw Problem.invalid("Idempotency-Key \(bad)", field: "Idempotency-Key") }
        return key
    }

    /// `If-Match: "<content hash>"`, or `content_hash` in the body; both may be given only
    /// when they agree (one would otherwise be signed and the other judged).
    static func seenContent(_ request: Request, _ f: Fields) throws -> Digest? {
        let body = try f.string("content_hash").map { text in
            guard let d = Digest(hex: text) else { throw Problem.invalid("content_hash: expected 64 hex digits", field: "content_hash") }
            return d
        }
        guard let header = request.headers[.ifMatch] else { return body }
        var h = Substring(header.trimmingCharacters(in: .whitespaces))
        if h.hasPrefix("W/") { h = h.dropFirst(2) }
        if h.hasPrefix("\""), h.hasSuffix("\""), h.count >= 2 { h = h.dropFirst().dropLast() }
        guard let d = Digest(hex: String(h)) else { throw Problem.invalid("If-Match: expected the action's content hash (64 hex digits)", field: "If-Match") }
        if let body, body != d { throw Problem.invalid("If-Match and content_hash name different content", field: "If-Match") }
        return d
    }
}

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
