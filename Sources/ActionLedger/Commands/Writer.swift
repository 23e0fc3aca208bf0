import Foundation

/// The ledger's one writer: runs every write transaction of a ``Ledger`` and commits
/// concurrent callers' commands together (group commit).
///
/// Callers block in ``submit(_:atomic:)`` until the transaction holding their commands has
/// committed durably. One caller at a time leads: it takes the jobs queued so far (its own
/// first) as a group and runs their transaction on its own thread, while callers arriving
/// meanwhile queue behind it; when its commit returns it hands the lead to the first of
/// them and wakes the rest of its group with their results. So write transactions never
/// overlap, each begins and commits on one thread, and a caller alone (the common case: one
/// person's tap) runs its command at once, with no thread hand-off.
///
/// A refused command is rolled back alone and the others in its group still commit; an
/// `atomic` job (a batch) is all or nothing. Commands run directly in the group's
/// transaction while refusals write nothing; when one is refused after it wrote, the group
/// is redone with each command (each batch) in a nested transaction. Order and idempotency
/// are exactly as if the commands ran one by one in queue order.
final class Writer: @unchecked Sendable {
    // Safe: `pending`, `leading` and `stopped` are only touched with `condition` locked.
    // A Job's fields are written by the leader before the job's semaphore is signalled and
    // read by its caller only after waiting on it (the semaphore orders the accesses); a
    // job's `lead` flag is set under the lock before that signal.

    final class Job {
        let requests: [CommandRequest]
        let atomic: Bool
        /// Maintenance work (import) that takes a transaction of its own.
        let exclusive: ((AppendSession) throws -> Void)?
        var results: [Result<CommandResult, LedgerError>] = []
        var failure: Error?
        /// Set when the caller is woken to lead the next group rather than with its results.
        var lead = false
        let done = DispatchSemaphore(value: 0)

        init(requests: [CommandRequest], atomic: Bool, exclusive: ((AppendSession) throws -> Void)? = nil) {
            self.requests = requests
            self.atomic = atomic
            self.exclusive = exclusive
        }
    }

    private let environment: Environment
    private let dbs: LogDatabases
    private let registry: ProjectionRegistry
    private let condition = NSCondition()
    /// Queued jobs, in submission order; the leader takes its group from the front.
    private var pending: [Job] = []
    /// True while a caller leads a group (from taking it to handing the lead on).
    private var leading = false
    private var stopped = false
    /// Most jobs one transaction takes, so one commit never waits on an endless queue.
    static let maxGroup = 1024

    init(environment: Environment, dbs: LogDatabases, registry: ProjectionRegistry) {
        self.environment = environment
        self.dbs = dbs
        self.registry = registry
    }

    /// Runs `requests` and returns one result per request once they are durable.
    /// - throws: a storage error that failed the whole transaction.
    func submit(_ requests: [CommandRequest], atomic: Bool) throws -> [Result<CommandResult, LedgerError>] {
        try wait(for: Job(requests: requests, atomic: atomic)).results
    }

    /// Runs `body` alone in one write transaction, committing when it returns; for
    /// maintenance such as import.
    func perform(_ body: @escaping (AppendSession) throws -> Void) throws {
        _ = try wait(for: Job(requests: [], atomic: true, exclusive: body))
    }

    /// Queues `job`, leads its group when no one else leads (or when handed the lead), and
    /// returns once the job's transaction has committed (or failed).
    private func wait(for job: Job) throws -> Job {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            throw LedgerError(.storage, "the ledger is closed")
        }
        pending.append(job)
        let follow = leading
        leading = true
        condition.unlock()
        if follow {
            job.done.wait()
        }
        if !follow || job.lead {
            lead()
        }
        if let failure = job.failure { throw failure }
        return job
    }

    /// Runs the group at the front of the queue (which starts with the caller's own job),
    /// then hands the lead to the next queued job or, with none, gives it up.
    private func lead() {
        condition.lock()
        // An exclusive job runs alone; commands are grouped up to the first one.
        let group: [Job]
        if pending[0].exclusive != nil {
            group = [pending[0]]
        } else {
            group = Array(pending.prefix(Writer.maxGroup).prefix { $0.exclusive == nil })
        }
        pending.removeFirst(group.count)
        condition.unlock()
        commit(group)
        // The leader's own job is first in its group: its caller is this thread, awake.
        // The others are woken before the lead passes on: under load most of them submit
        // again while the next leader wakes, and join its group rather than wait a commit.
        for job in group.dropFirst() { job.done.signal() }
        condition.lock()
        if let next = pending.first {
            next.lead = true
            next.done.signal()
        } else {
            leading = false
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Jobs waiting for a leader; lets tests line up a group deterministically.
    var queuedJobs: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count
    }

    /// Refuses new jobs, lets queued ones finish and waits until no transaction runs: the
    /// environment may only be closed (or reopened in this process) once none can start.
    func stop() {
        condition.lock()
        stopped = true
        while leading { condition.wait() }
        condition.unlock()
    }

    private func commit(_ group: [Job]) {
        do {
            let results: [[Result<CommandResult, LedgerError>]]
            do {
                results = try transaction(group, isolated: false)
            } catch is WroteBeforeRefusal {
                // Rare: a command was refused after it had written. The optimistic
                // transaction was aborted; redo the group with each command nested.
                results = try transaction(group, isolated: true)
            }
            for (job, r) in zip(group, results) { job.results = r }  // empty for an exclusive job
        } catch {
            for job in group { job.failure = error }
        }
    }

    /// Thrown out of an optimistic transaction when a refused command had already written:
    /// only a nested transaction can take back its writes.
    private struct WroteBeforeRefusal: Error {}

    /// One write transaction for `group`. Optimistic (`isolated == false`), commands run
    /// straight in the transaction: a refusal that wrote nothing needs no rollback, and
    /// nearly every refusal is decided before the first write. Child transactions are
    /// costly in LMDB (each copies every page it touches), so they are only used
    /// (`isolated`) when a refusal came after a write.
    private func transaction(_ group: [Job], isolated: Bool) throws -> [[Result<CommandResult, LedgerError>]] {
        // The closure may run again after the map grows: results are rebuilt each time.
        try environment.write { txn in
            let session = try AppendSession(txn: txn, dbs: dbs, registry: registry)
            if let exclusive = group[0].exclusive {
                try exclusive(session)
                try session.finish()
                return []
            }
            let results = try group.map { job in try run(job, session, isolated: isolated) }
            try session.finish()
            return results
        }
    }

    private func run(_ job: Job, _ session: AppendSession, isolated: Bool) throws -> [Result<CommandResult, LedgerError>] {
        if job.atomic {
            let writes = session.writes
            do {
                let batch = {
                    try job.requests.enumerated().map { i, request in
                        do {
                            return try CommandHandler.run(request, in: session)
                        } catch let e as LedgerError {
                            // Name the failing item: the whole batch is refused because of it.
                            var details = e.details
                            details["index"] = .number(Double(i))
                            throw LedgerError(e.code, "item \(i + 1): \(e.message)", details: details)
                        }
                    }
                }
                let results = try isolated ? session.nested(batch) : batch()
                return results.map { .success($0) }
            } catch let error as LedgerError {
                if !isolated && session.writes != writes { throw WroteBeforeRefusal() }
                return job.requests.map { _ in .failure(error) }
            }
        }
        return try job.requests.map { request in
            let writes = session.writes
            do {
                let command = { try CommandHandler.run(request, in: session) }
                return .success(try isolated ? session.nested(command) : command())
            } catch let error as LedgerError {
                if !isolated && session.writes != writes { throw WroteBeforeRefusal() }
                return .failure(error)
            }
        }
    }
}
