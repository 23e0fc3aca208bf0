import Foundation
import Testing
@testable import ActionLedger

/// What a write transaction remembers of the state it read (AppendSession's caches: a
/// device's state, a person's org, a day's auto-ship count, the relying party) follows its own
/// writes and rollbacks: a command judges by the state the commands before it left.
@Suite struct SessionCacheTests {
    /// A transaction reads a device's state once (AppendSession.deviceState); a device
    /// linked or revoked by a command earlier in the same group is judged as it now stands.
    @Test func aGroupJudgesDevicesAsItsEarlierCommandsLeftThem() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        try l.execute(batch: ["b1", "b2", "b3"].map { CommandRequest(.propose(proposal($0, stakes: .low)), now: t0) })
        let approve = { (id: String, device: String) in CommandRequest(.tap(.approve, actionId: id, device: device), now: t0) }
        let r = try l.execute(group: [
            approve("b1", "iphone"),
            CommandRequest(.revokeDevice(device: "iphone", reason: "lost"), now: t0),
            approve("b2", "iphone"),
            approve("b3", "laptop"),
            CommandRequest(.linkDevice(device: "laptop", person: "quinn", org: "quinn-co", label: "laptop", platform: .web), now: t0),
            approve("b3", "laptop"),
        ])
        #expect((try? r[0].get())?.action?.status == .approved)
        #expect(code(r[2]) == .deviceRevoked)
        #expect(code(r[3]) == .unknownDevice)
        let last = try #require(try r[5].get())
        #expect(last.events.first?.event.device == "laptop" && last.action?.status == .approved)
        #expect(try l.read { try $0.actionState("b2") }?.status == .pending)
        try l.verifyProjections()
    }

    /// A transaction remembers a person's org once read or bound (AppendSession.personOrg);
    /// a batch rolled back takes its binding back, so a later job in the same transaction
    /// may bind the person to another org.
    @Test func aRolledBackBatchTakesItsOrgBindingBack() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let writer = Writer(environment: l.environment, dbs: l.dbs, registry: l.registry)
        defer { writer.stop() }
        var bound = proposal("n1", person: "newcomer")
        bound.org = "org-a"
        var other = proposal("n2", person: "newcomer")
        other.org = "org-b"
        let jobs: [(requests: [CommandRequest], atomic: Bool)] = [
            // Binds newcomer to org-a, then fails: the whole batch is rolled back.
            ([CommandRequest(.propose(bound), now: t0), CommandRequest(.tap(.approve, actionId: "nope", device: "iphone"), now: t0)], true),
            ([CommandRequest(.propose(other), now: t0)], false),
        ]
        let outcome = Locked<[Int: [Result<CommandResult, LedgerError>]]>([:])
        let gate = DispatchSemaphore(value: 0), blocking = DispatchSemaphore(value: 0)
        let blocker = Thread { try? writer.perform { _ in blocking.signal(); _ = gate.wait(timeout: .now() + 120) } }
        blocker.start()
        try wait(blocking, "the blocking transaction to open")
        for (i, job) in jobs.enumerated() {
            Thread {
                let r = (try? writer.submit(job.requests, atomic: job.atomic)) ?? []
                outcome.update { $0[i] = r }
            }.start()
            try waitUntil("job \(i) to queue", pollMicroseconds: 200) { writer.queuedJobs >= i + 1 }
        }
        gate.signal()
        try waitUntil("both jobs' results") { outcome.value.count == jobs.count }
        #expect(code(outcome.value[0]?[0]) == .unknownAction)
        let second = try #require(try outcome.value[1]?[0].get())
        #expect(second.events.first?.event.org == "org-b")
        #expect(try l.read { try $0.personOrg("newcomer") } == "org-b")
    }

    /// A transaction reads the relying party once (AppendSession.relyingParty); one set by
    /// a command earlier in the group is the one a later WebAuthn tap is checked against.
    @Test func aGroupChecksWebAuthnAgainstTheRelyingPartyItSet() throws {
        let t = try keyedStore()
        let auth = SoftwareAuthenticator()
        try t.ledger.run(.linkKeyedDevice(device: "iphone", person: "quinn", org: "quinn-co", label: "iPhone", platform: .ios,
                                          key: try auth.key.key(.device)))
        let review = Command.tap(.review, actionId: "a1", device: "iphone")
        func signed(_ commandId: String) throws -> CommandRequest {
            let statement = try t.ledger.statement(for: review, commandId: commandId, claimedAt: t0)
            return CommandRequest(review, commandId: commandId, now: t0, proof: try auth.proof(statement.bytes, claimedAt: t0))
        }
        let r = try t.ledger.execute(group: [
            try signed("cmd-before"),
            CommandRequest(.setRelyingParty(try RelyingParty(rpId: auth.rpId, origins: [auth.origin])), now: t0),
            try signed("cmd-after"),
        ])
        #expect(code(r[0]) == .badProof)
        let after = try #require(try r[2].get())
        #expect(after.events.first?.event.type == .actionReviewed)
    }
}
