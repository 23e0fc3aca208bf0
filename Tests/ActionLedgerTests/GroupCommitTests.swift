import CLMDB
import Foundation
import Testing
@testable import ActionLedger

/// Correctness of group commit (speed lives in Benchmarks/): concurrent callers each get
/// their own result, only once their transaction committed; a refusal stays with its
/// command; order, idempotency and dense seqs are as if the commands ran one by one.
@Suite struct GroupCommitTests {
    @Test func concurrentCallersGetTheirOwnCommittedResults() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let callers = 24
        _ = try l.execute(batch: (0..<callers).map { CommandRequest(.propose(proposal("a\($0)", stakes: .low)), now: t0) })
        let seen = Locked<[Int: CommandResult]>([:])
        let problems = Locked<[String]>([])
        try onThreads(callers) { i in
            do {
                let r = try l.execute(CommandRequest(.tap(.approve, actionId: "a\(i)", device: "iphone"), now: t0))
                seen.update { $0[i] = r }
                // Committed when execute returns: a fresh snapshot already holds the event.
                let stored = try l.read { try $0.event(r.events[0].seq) }
                if stored != r.events[0] { problems.update { $0.append("caller \(i): snapshot differs from its result") } }
            } catch {
                problems.update { $0.append("caller \(i): \(error)") }
            }
        }
        #expect(problems.value == [])
        let results = seen.value
        #expect(results.count == callers)
        for (i, r) in results {
            #expect(r.events.count == 1)
            #expect(r.events.first?.event.actionId == "a\(i)")
            #expect(r.events.first?.event.type == .actionApproved)
            #expect(r.action?.status == .approved)
            #expect(!r.replayed)
        }
        // Every approval got a distinct seq right after the set-up, with no gap.
        let seqs = results.values.map { $0.events[0].seq }.sorted()
        #expect(seqs == Array(UInt64(callers + 2)...UInt64(2 * callers + 1)))
        try expectDenseChain(l, count: 2 * callers + 1)
    }

    @Test func anotherProcessSeesTheEventsOnceExecuteReturns() throws {
        let t = try TempLedger()
        let l = t.ledger!, path = t.path
        try l.link("iphone")
        let problems = Locked<[String]>([])
        try onThreads(6) { i in
            do {
                let r = try l.execute(CommandRequest(.propose(proposal("p\(i)")), now: t0))
                // mdb_stat opens the file on its own: the commit reached the file's shared state.
                let entries = try entriesSeenByAnotherProcess(path)
                if entries < r.events[0].seq {
                    problems.update { $0.append("p\(i): seq \(r.events[0].seq), mdb_stat saw \(entries)") }
                }
            } catch {
                problems.update { $0.append("p\(i): \(error)") }
            }
        }
        #expect(problems.value == [])
        #expect(try entriesSeenByAnotherProcess(t.path) == 7)
    }

    /// Jobs queued behind a blocked writer form one group: one LMDB transaction whose
    /// callers get results in queue order, refusals (and a refused batch) rolled back alone.
    @Test func oneGroupIsOneTransactionAndRefusalsStayWithTheirCommand() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        try l.run(.propose(proposal("m1", stakes: .medium)))
        // maxLag 1: the group's commit also folds its events into the projections, after
        // the batch's rollback, which must leave nothing of g2 there either.
        let registry = ProjectionRegistry(l.registry.projections, maxLag: 1)
        let writer = Writer(environment: l.environment, dbs: l.dbs, registry: registry)
        defer { writer.stop() }
        let before = lastTransactionId(l.environment)

        let jobs: [[CommandRequest]] = [
            [CommandRequest(.propose(proposal("g1", stakes: .low)), commandId: "cmd-g1", now: t0)],
            [CommandRequest(.tap(.approve, actionId: "nope", device: "iphone"), now: t0)],
            [CommandRequest(.propose(proposal("g2", stakes: .low)), commandId: "cmd-g2", now: t0),
             CommandRequest(.tap(.approve, actionId: "m1", device: "iphone"), now: t0)],      // taps_required
            [CommandRequest(.propose(proposal("g1", stakes: .low)), commandId: "cmd-g1", now: t0)],  // replay
            [CommandRequest(.propose(proposal("g1", stakes: .low)), commandId: "cmd-other", now: t0)],
            [CommandRequest(.tap(.approve, actionId: "g1", device: "iphone"), now: t0)],
        ]
        let atomicJob = 2  // submitted as a batch: all or nothing
        let outcome = Locked<[Int: [Result<CommandResult, LedgerError>]]>([:])
        let gate = DispatchSemaphore(value: 0), blocking = DispatchSemaphore(value: 0)
        let blocker = Thread { try? writer.perform { _ in blocking.signal(); _ = gate.wait(timeout: .now() + 120) } }
        blocker.start()
        try wait(blocking, "the blocking transaction to open")
        var threads: [Thread] = []
        for (i, requests) in jobs.enumerated() {
            let thread = Thread {
                let r = (try? writer.submit(requests, atomic: i == atomicJob)) ?? []
                outcome.update { $0[i] = r }
            }
            thread.start()
            threads.append(thread)
            try waitUntil("job \(i) to queue", pollMicroseconds: 200) { writer.queuedJobs >= i + 1 }  // queue order = job order
        }
        gate.signal()
        try waitUntil("the results of all \(jobs.count) queued jobs") { outcome.value.count == jobs.count }

        // The blocker appended nothing, so its commit wrote nothing (LMDB skips an empty
        // commit); the whole group is exactly one more transaction.
        #expect(lastTransactionId(l.environment) == before + 1)
        let r = outcome.value
        let g1 = try #require(try r[0]?[0].get())
        #expect(g1.events.map(\.seq) == [3] && !g1.replayed)
        #expect(code(r[1]?[0]) == LedgerError.Code.unknownAction)
        #expect(r[2]?.count == 2 && code(r[2]?[0]) == .tapsRequired && code(r[2]?[1]) == .tapsRequired)
        let replay = try #require(try r[3]?[0].get())
        #expect(replay.replayed && replay.events == g1.events)
        #expect(code(r[4]?[0]) == .duplicateAction)
        let approved = try #require(try r[5]?[0].get())
        #expect(approved.events.map(\.seq) == [4])  // g2, appended then rolled back, left no gap
        #expect(approved.action?.status == .approved)
        #expect(try l.read { try $0.actionState("g2") } == nil)
        try expectDenseChain(l, count: 4)
        #expect(try l.environment.read { txn in try registry.projections.map { try registry.meta($0.name, in: txn)?.checkpoint } }
            == Array(repeating: 4, count: registry.projections.count))
        try l.verifyProjections()
        #expect(try l.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }.items.map(\.actionId) == ["m1"])
    }

    /// A group of several commands does not fold (its callers wait for no fold): the
    /// projections trail until the writer thread finds its queue empty and folds them in a
    /// transaction of its own. Queries answer at the head all along.
    @Test func groupsLeaveTheFoldToTheIdleWriter() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let registry = ProjectionRegistry(l.registry.projections, maxLag: 4)
        let writer = Writer(environment: l.environment, dbs: l.dbs, registry: registry)
        defer { writer.stop() }
        let gate = DispatchSemaphore(value: 0), blocking = DispatchSemaphore(value: 0)
        let blocker = Thread { try? writer.perform { _ in blocking.signal(); _ = gate.wait(timeout: .now() + 120) } }
        blocker.start()
        try wait(blocking, "the blocking transaction to open")
        let done = Locked<Int>(0)
        for i in 0..<12 {
            Thread {
                _ = try? writer.submit([CommandRequest(.propose(proposal("q\(i)", stakes: .low)), now: t0)], atomic: false)
                done.update { $0 += 1 }
            }.start()
            try waitUntil("job \(i) to queue", pollMicroseconds: 200) { writer.queuedJobs >= i + 1 }
        }
        let before = lastTransactionId(l.environment)
        gate.signal()
        try waitUntil("the 12 proposals") { done.value == 12 }
        let head = try l.read { try $0.head().seq }
        #expect(head == 13)
        // The group's commit (12 events, a bound of 32) did not fold; the idle writer then did.
        try waitUntil("the idle fold") {
            (try? l.environment.read { txn in try registry.projections.allSatisfy { try registry.meta($0.name, in: txn)?.checkpoint == head } }) == true
        }
        #expect(lastTransactionId(l.environment) == before + 2)
        try l.verifyProjections()
        #expect(try l.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }.count == 12)
    }

    @Test func sameCommandIdFromManyThreadsAppendsOnce() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let results = Locked<[CommandResult]>([])
        try onThreads(16) { _ in
            let request = CommandRequest(.propose(proposal("once", stakes: .low)), commandId: "cmd-once", now: t0)
            if let r = try? l.execute(request) {
                results.update { $0.append(r) }
            }
        }
        let all = results.value
        #expect(all.count == 16)
        #expect(all.filter { !$0.replayed }.count == 1)
        #expect(all.allSatisfy { $0.events == all[0].events })  // same seqs and hashes for every caller
        #expect(try l.read { try $0.actionEvents("once") }.count == 1)
        try expectDenseChain(l, count: 2)
    }

    @Test func eachCallersCommandsKeepTheirOrder() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let problems = Locked<[String]>([])
        try onThreads(8) { i in
            var last: UInt64 = 0
            for step in 0..<5 {
                do {
                    let r = try l.execute(CommandRequest(.propose(proposal("o\(i)-\(step)")), now: t0))
                    if r.events[0].seq <= last {
                        problems.update { $0.append("o\(i)-\(step) got \(r.events[0].seq) after \(last)") }
                    }
                    last = r.events[0].seq
                } catch {
                    problems.update { $0.append("\(error)") }
                }
            }
        }
        #expect(problems.value == [])
        try expectDenseChain(l, count: 41)
    }

    /// A failure that is not a refusal (here a projection's storage-like error) aborts the
    /// whole transaction: nobody in the group is told success, nothing is appended.
    @Test func aFailedTransactionFailsEveryCallerAndAppendsNothing() throws {
        var options = Ledger.Options()
        // maxLag 1: the fold runs in the commit of each group (with a lag, the tripwire's
        // event would be committed and the engine stop at the next fold instead).
        options.projections = ProjectionRegistry([Tripwire()], maxLag: 1)
        let t = try TempLedger(options: options)
        let l = t.ledger!
        try l.link("iphone")
        let results = try? l.execute(group: [
            CommandRequest(.propose(proposal("fine")), now: t0),
            CommandRequest(.propose(proposal("tripwire")), now: t0),
        ])
        #expect(results == nil)
        #expect(try l.read { try $0.head().seq } == 1)
        #expect(try l.run(.propose(proposal("after"))).events[0].seq == 2)  // the writer carries on
        try expectDenseChain(l, count: 2)
    }
}

/// Throws a non-refusal error on the action `tripwire`.
private struct Tripwire: Projection {
    struct Failure: Error {}
    let name = "tripwire"
    let version: UInt32 = 1
    let databases = ["seen"]
    func apply(_ event: Event, to store: ProjectionStore) throws {
        if event.actionId == "tripwire" { throw Failure() }
    }
}

/// The code a group's command was refused with; nil when it succeeded.
func code(_ r: Result<CommandResult, LedgerError>?) -> LedgerError.Code? {
    if case .failure(let e)? = r { return e.code }
    return nil
}

private func lastTransactionId(_ environment: Environment) -> Int {
    var info = MDB_envinfo()
    mdb_env_info(environment.env, &info)
    return info.me_last_txnid
}

/// Entries in `events` as `mdb_stat`, a separate process, reads them from the file.
private func entriesSeenByAnotherProcess(_ path: String) throws -> UInt64 {
    let r = try Child("/usr/bin/mdb_stat", ["-n", "-s", "events", path]).finish(within: 60)
    guard r.status == 0, !r.signalled else { throw LedgerError(.storage, "mdb_stat failed (\(r.status)): \(r.stderr)") }
    let text = r.stdout
    guard let line = text.split(separator: "\n").first(where: { $0.contains("Entries:") }),
          let n = UInt64(line.split(separator: " ").last ?? "") else {
        throw LedgerError(.storage, "unexpected mdb_stat output: \(text)")
    }
    return n
}

/// Runs `body(i)` for i in 0..<n, each on its own thread, all released at once.
private func onThreads(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) throws {
    let start = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
    for i in 0..<n {
        Thread {
            start.wait()
            body(i)
            done.signal()
        }.start()
    }
    for _ in 0..<n { start.signal() }
    for i in 0..<n { try wait(done, "\(n - i) of \(n) threads to finish", seconds: 120) }
}
