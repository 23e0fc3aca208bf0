import Foundation
import Testing
@testable import ActionLedger

/// How the writer hands work on and stops: a lone caller commits on its own thread, jobs
/// queued behind it go to the writer thread.
@Suite struct WriterHandOffTests {
    /// A caller running its own transaction hands the jobs queued behind it to the writer
    /// thread, even when its transaction failed; `stop` waits for the queue to drain, and
    /// once it returns new jobs are refused.
    @Test func theLeadPassesOnAfterAFailureAndStopWaitsForTheQueue() throws {
        struct Boom: Error {}
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let writer = Writer(environment: l.environment, dbs: l.dbs, registry: l.registry)
        let gate = DispatchSemaphore(value: 0), blocking = DispatchSemaphore(value: 0)
        let leaderOutcome = Locked<String?>(nil)
        Thread {
            do {
                try writer.perform { _ in blocking.signal(); _ = gate.wait(timeout: .now() + 120); throw Boom() }
                leaderOutcome.update { $0 = "committed" }
            } catch {
                leaderOutcome.update { $0 = "\(type(of: error))" }
            }
        }.start()
        try wait(blocking, "the leading caller to open its transaction")
        let queued = Locked<[Result<CommandResult, LedgerError>]?>(nil)
        Thread {
            // A throw leaves no results (the check below then fails rather than waits).
            let r = try? writer.submit([CommandRequest(.propose(proposal("q1")), now: t0)], atomic: false)
            queued.update { $0 = r ?? [] }
        }.start()
        try waitUntil("a job queued behind the leader", pollMicroseconds: 200) { writer.queuedJobs >= 1 }
        let stopped = Locked(false)
        Thread { writer.stop(); stopped.update { $0 = true } }.start()
        usleep(50_000)
        #expect(!stopped.value)  // the leader's transaction is still open
        gate.signal()
        try waitUntil("stop() to return once the queue drained") { stopped.value }
        // Woken with their results before the lead was given up; their threads may lag.
        try waitUntil("the queued job's and the leader's results") { queued.value != nil && leaderOutcome.value != nil }

        #expect(leaderOutcome.value == "Boom")
        let r = try #require(queued.value)
        #expect(try r.map { try $0.get().events.map(\.seq) } == [[2]])
        expectLedgerError(.storage, "a job submitted after stop") {
            try writer.submit([CommandRequest(.propose(proposal("late")), now: t0)], atomic: false)
        }
        try expectDenseChain(l, count: 2)
    }
}
