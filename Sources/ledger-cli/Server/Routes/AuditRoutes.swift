import ActionLedger
import Foundation
import Hummingbird

/// The auditor's views: an action's trail, a device's, an actor's, a specialist's and a
/// surface's listings, a person's timeline, the auto-shipped report, the proof levels of the
/// decisions, and decision replay; each for the auditor's org only.
extension LedgerServer {
    func addAuditRoutes(_ router: Router<APIContext>) {
        router.getAndHead("/v1/audit/actions/:id") { _, context in
            let who = try context.require(.auditor)
            let id = try context.pathId("id")
            guard try self.ledger.read({ try $0.actionState(id)?.org }) == who.org else {
                throw LedgerError(.unknownAction, "no action \(id)", details: ["action_id": .string(id)])
            }
            let now = try self.now()
            let trail = try self.ledger.query { try $0.auditAction(id, now: now) }
            guard case .object(var o) = trail.json else { return LedgerServer.json(trail.json) }
            o["trail"] = try self.withProofs(trail.trail)
            return LedgerServer.json(.object(o))
        }
        router.getAndHead("/v1/audit/devices/:id") { request, context in
            let who = try context.require(.auditor)
            let id = try context.pathId("id")
            guard try self.ledger.read({ try $0.deviceState(id)?.org }) == who.org else {
                throw LedgerError(.unknownDevice, "device \(id) was never linked in \(who.org)", details: ["device": .string(id)])
            }
            let q = Query(request: request)
            let window = try self.window(q, defaultSince: nil)
            let limit = try q.int("limit", default: 100, in: 1...10_000)
            return LedgerServer.json(try self.listingJSON(try self.ledger.query {
                try $0.audit(.device(id), in: window, limit: limit, pageToken: q.string("page_token"))
            }))
        }
        // An actor's, a specialist's and a surface's listings. An actor (the operator, a
        // specialist) may act in several orgs, and specialists and surfaces are named alike in
        // every org: the auditor's only — by the org each event is recorded under (a policy or
        // a token names the operator as its person, bound to no org) — filtered while paging,
        // so neither a page nor its token comes from another org.
        let listings = [("actors", "id", AuditIndex.actor), ("specialists", "name", AuditIndex.specialist),
                        ("surfaces", "name", AuditIndex.surface)]
        for (path, parameter, index) in listings {  // the path parameters as openapi names them
            router.getAndHead("/v1/audit/\(path)/:\(parameter)") { request, context in
                let who = try context.require(.auditor)
                let name = try context.pathText(parameter, most: path == "actors" ? Event.longestActor : 256)
                let q = Query(request: request)
                let window = try self.window(q, defaultSince: nil)
                let limit = try q.int("limit", default: 100, in: 1...10_000)
                let listing = try self.ledger.query { query in
                    try query.audit(index(name), in: window, limit: limit, pageToken: q.string("page_token")) { $0.org == who.org }
                }
                return LedgerServer.json(try self.listingJSON(listing))
            }
        }
        router.getAndHead("/v1/audit/proofs") { request, context in
            let who = try context.require(.auditor)
            let q = Query(request: request)
            let window = try self.window(q, defaultSince: nil)
            let limit = try q.int("limit", default: 100, in: 1...10_000)
            let pageToken = q.string("page_token")
            let ledger = self.ledger
            // A scan of the log in the window, as `ledger audit proofs`: on a Dispatch thread.
            let report = try await Blocking.run { try ledger.proofReport(in: window, org: who.org, limit: limit, pageToken: pageToken) }
            return LedgerServer.json(report.json)
        }
        router.getAndHead("/v1/audit/activity") { request, context in
            let who = try context.require(.auditor)
            let q = Query(request: request)
            guard let person = q.string("person") else { throw Problem.invalid("person is required", field: "person") }
            try Self.requireName(person, "person")
            let types: Set<EventType>? = try q.string("type").map { list in
                // An empty name is no type: it had filtered everything out, answering nothing.
                Set(try list.split(separator: ",", omittingEmptySubsequences: false).map { name in
                    guard let t = EventType(name: String(name)) else { throw Problem.invalid("type: unknown event type \(name)", field: "type") }
                    return t
                })
            }
            let window = try self.window(q, defaultSince: nil)
            let limit = try q.int("limit", default: 100, in: 1...10_000)
            // By the org each event is recorded under, as the actors listing: the person's binding
            // alone would show another org's rows that name the same person id (the operator's).
            let page = try self.ledger.query {
                try $0.activity(person: person, types: types, in: window, limit: limit, pageToken: q.string("page_token"), org: who.org)
            }
            return LedgerServer.json(page.json(proofs: try self.ledger.proofSummaries(page.items.map(\.seq))))
        }
        router.getAndHead("/v1/audit/autoshipped") { request, context in
            let who = try context.require(.auditor)
            let q = Query(request: request)
            let window = try self.window(q, defaultSince: Timestamp.day)
            if let person = q.string("person") { try Self.requireName(person, "person") }
            var report = try self.ledger.query { try $0.autoShipped(in: window, person: q.string("person")) }
            // The projection is store-wide: keep the auditor's org only (each person belongs to one org).
            let orgs = try self.ledger.read { r in try Set(report.items.map(\.person)).filter { try r.personOrg($0) == who.org } }
            report.items = report.items.filter { orgs.contains($0.person) }
            report.count = report.items.count
            // In the order the CLI prints them (by kind), as queries.md shows.
            report.byKind = Dictionary(grouping: report.items, by: \.kind).map { (kind: $0.key, count: $0.value.count) }
                .sorted { $0.kind < $1.kind }
            return LedgerServer.json(report.json)
        }
        router.getAndHead("/v1/audit/replay") { request, context in
            let who = try context.require(.auditor)
            let from = UInt64(try Query(request: request).int("from", default: 1, in: 1...Query.maxSeq))
            let ledger = self.ledger
            // A whole-log pass: on a Dispatch thread, like the commands.
            let report = try await Blocking.run { try ledger.replayDecisions(from: from) }
            // The whole log is judged (one chain); an org's auditor gets its org's counts.
            return LedgerServer.json(report.scoped(to: who.org).json(from: from))
        }
    }

    /// An audit listing's JSON with each row's proof members, as the CLI prints them
    /// (queries.md: audit items carry `proof_level`, `key_fingerprint`, `uv_basis`).
    func listingJSON(_ listing: AuditListing) throws -> JSON {
        guard case .object(var o) = listing.json else { return listing.json }
        o["items"] = try withProofs(listing.entries)
        return .object(o)
    }

    /// Audit rows as JSON, each with its step's proof read from the log by seq (null
    /// members for events no device made).
    func withProofs(_ entries: [AuditEntry]) throws -> JSON {
        let proofs = try ledger.proofSummaries(entries.map(\.seq))
        return .array(entries.map { ProofSummary.appending(proofs[$0.seq], to: $0.json) })
    }

    /// A name a query looks for that no event can hold (empty, or over an id's 128) is
    /// refused, as the CLI refuses it, not answered empty; counted in characters, as openapi
    /// states it. Which characters is not judged: ids stored before the identifier rules stay readable.
    static func requireName(_ value: String, _ field: String) throws {
        guard (1...128).contains(value.unicodeScalars.count) else { throw Problem.invalid("\(field): 1–128 characters", field: field) }
    }
}
