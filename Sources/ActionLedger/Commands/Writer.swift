import Foundation

/// The ledger's one writer: runs every write transaction of a ``Ledger`` and commits
/// concurrent callers' commands together (group commit).
///
/// Callers block in ``submit(_:atomic:)`` until the transaction holding their commands has
/// committed durably. A caller that finds no transaction running runs its own job's
/// transaction on its own thread, so a lone caller (the common case: one person's tap)
/// pays no thread hand-off. Callers arriving while a
/// transaction runs queue; when it commits with jobs queued, the writer thread takes the
/// lead and commits them in groups until the queue is empty. While the thread leads, jobs
/// that arrive during a group's transaction join it, up to the previous group's size
/// (``gather(after:took:)``), so steady callers share one commit. Write transactions never
/// overlap, and each begins and commits on one thread.
///
/// A refused command is rolled back alone and the others in its group still commit; an
/// `atomic` job (a batch) is all or nothing. Commands run directly in the group's
/// transaction while refusals write nothing; when one is refused after it wrote, the group
/// is redone with each command (each batch) in a nested transaction. Order and idempotency
/// are exactly as if the commands ran one by one in queue order.
///
/// After the log's writes the writer folds the projections (`ProjectionRegistry.fold(after:)`).
/// A lone command folds once the projections trail by `maxLag`; a group of several does
/// not fold until they trail by ``groupFoldBound``, and when the writer thread finds its
/// queue empty it folds in a transaction of its own. So groups under load stay small
/// (their callers wait for no fold), and queries fold at most a short tail in memory.
final class Writer: @unchecked Sendable {
    // Safe: `pending`, `leading`, `threadLeads`, `stopped` and `gathering` are only touched
    // with `condition` locked; `filings` only inside a write transaction, which one leader
    // at a time runs (leadership passes through `condition`, which orders the accesses).
    // A Job's fields are written by its group's leader before the job's semaphore is
    // signalled and read by its caller only after waiting on it (the semaphore orders the
    // accesses).

    final class Job {
        let requests: [CommandRequest]
        let atomic: Bool
        /// Maintenance work (import) that takes a transaction of its own.
        let exclusive: ((AppendSession) throws -> Void)?
        var results: [Result<CommandResult, LedgerError>] = []
        var failure: Error?
        let done = DispatchSemaphore(value: 0)

        init(requests: [CommandRequest], atomic: Bool, exclusive: ((AppendSession) throws -> Void)? = nil) {
            self.requests = requests
            self.atomic = atomic
            self.exclusive = exclusive
        }
    }

    let environment: Environment
    let dbs: LogDatabases
    let registry: ProjectionRegistry
    private let condition = NSCondition()
    /// Queued jobs, in submission order; each group is taken from the front.
    private var pending: [Job] = []
    /// True while a group's transaction runs, whether a caller or the writer thread leads it.
    private var leading = false
    /// True while the writer thread leads: from a commit that left jobs queued until the
    /// queue is empty.
    private var threadLeads = false
    private var stopped = false
    /// While the writer thread waits for jobs to join (``gather(after:took:)``,
    /// ``takeJoining(_:have:)``): the queue length that wakes it (1: the first arrival),
    /// else 0, so submitters signal `condition` only when someone waits for them.
    private var gathering = 0
    /// Filings of actions that commands judged, for the folds (``KnownFilings``).
    var filings = KnownFilings()
    /// Signalled when the thread has left its loop, so closing waits for it.
    private let exited = DispatchSemaphore(value: 0)
    /// Most jobs one transaction takes, so one commit never waits on an endless queue.
    static let maxGroup = 1024
    /// How far a group of several commands lets the projections trail before it folds
    /// inline: eight folds' worth, well below what a query replays (``ProjectionRegistry/replayLimit``).
    /// A registry that folds every commit (`maxLag` 1: projections always at the head) keeps doing so.
    var groupFoldBound: UInt64 { registry.maxLag == 1 ? 1 : min(registry.maxLag * 8, ProjectionRegistry.replayLimit) }

    init(environment: Environment, dbs: LogDatabases, registry: ProjectionRegistry) {
        self.environment = environment
        self.dbs = dbs
        self.registry = registry
        let thread = Thread { [self] in run() }
        thread.name = "ActionLedger.writer"
        thread.start()
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

    /// Queues `job` and returns once its transaction has committed (or failed): leading
    /// that transaction itself when none was running, else waiting for its leader.
    private func wait(for job: Job) throws -> Job {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            throw LedgerError(.storage, "the ledger is closed")
        }
        if leading {
            pending.append(job)
            if gathering > 0 && pending.count == gathering { condition.signal() }
            condition.unlock()
            job.done.wait()
        } else {
            // Nothing runs, so nothing is queued either: the job is a group of its own.
            leading = true
            condition.unlock()
            commit([job])
            condition.lock()
            if pending.isEmpty {
                leading = false
                // Only `stop` (and the thread, once stopping) wait for that: no wake-up otherwise.
                if stopped { condition.broadcast() }
            } else {
                threadLeads = true
                condition.broadcast()
            }
            condition.unlock()
        }
        if let failure = job.failure { throw failure }
        return job
    }

    /// The next group from the front of the queue (`condition` locked): an exclusive job
    /// alone, else the commands up to the first exclusive job.
    private func takeGroup() -> [Job] {
        let group: [Job]
        if pending[0].exclusive != nil {
            group = [pending[0]]
        } else {
            group = Array(pending.prefix(Writer.maxGroup).prefix { $0.exclusive == nil })
        }
        pending.removeFirst(group.count)
        return group
    }

    /// Whether the folds know `actionId`'s filing; for tests, with no transaction running.
    func knowsFiling(_ actionId: String) -> Bool { filings.knows(actionId) }

    /// Jobs waiting for a leader; lets tests line up a group deterministically.
    var queuedJobs: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count
    }

    /// Refuses new jobs, lets queued ones finish, then ends the thread and waits for it: the
    /// environment may only be closed (or reopened in this process) once no transaction can start.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while leading { condition.wait() }
        condition.unlock()
        exited.wait()
    }

    /// The writer thread: leads while callers queue faster than groups commit. After each
    /// group it signals the group's callers, then gathers (``gather(after:took:)``) so that
    /// they join the next group rather than trail it.
    private func run() {
        // What the next transaction may wait for: set by the group just committed.
        var joining: Joining?
        condition.lock()
        while true {
            while !threadLeads && !(stopped && !leading) { condition.wait() }
            guard threadLeads else {
                condition.unlock()
                exited.signal()
                return
            }
            let group = takeGroup()
            condition.unlock()
            let started = DispatchTime.now().uptimeNanoseconds
            let jobs = commit(group, joining: group[0].exclusive == nil ? joining : nil)
            let took = DispatchTime.now().uptimeNanoseconds - started
            for job in jobs { job.done.signal() }
            condition.lock()
            joining = gather(after: jobs.count, took: took)
            if pending.isEmpty {
                // Idle: fold what the groups left behind, then look at the queue again.
                condition.unlock()
                foldIdle()
                condition.lock()
            }
            if pending.isEmpty {
                threadLeads = false
                leading = false
                joining = nil
                if stopped { condition.broadcast() }
            }
        }
    }

    /// How long the next transaction may wait for more jobs, and for how many.
    struct Joining {
        let target: Int
        let deadline: DispatchTime

        /// The deadline as `NSCondition.wait(until:)` takes it.
        var date: Date {
            Date(timeIntervalSinceNow: Double(Int64(deadline.uptimeNanoseconds) - Int64(DispatchTime.now().uptimeNanoseconds)) / 1e9)
        }
    }

    /// Group commit's gathering (`condition` locked). The callers of a group of several
    /// jobs, just released, mostly submit again within microseconds; without waiting for
    /// them, the jobs queued meanwhile start the next transaction alone, and under steady
    /// load the callers split into two halves taking turns, each paying a commit (and an
    /// fsync) of its own. So after a group of `size` jobs the next transaction may take
    /// jobs that arrive while it runs (``takeJoining(_:have:)``) until it holds as many, for
    /// at most as long as that group's commit took, the wait spent running the jobs already
    /// there. The commit's own duration is the natural bound: waiting longer costs more than
    /// the commit a latecomer would otherwise pay, and callers that verify a signature first
    /// come back late. The cap keeps a slow disk from holding a group open for long. Only
    /// with the queue empty does the thread wait idle here, for the first of them. A lone
    /// caller never waits (it leads its own transaction), nor does a group of one.
    private func gather(after size: Int, took: UInt64) -> Joining? {
        guard size > 1, !stopped else { return nil }
        let joining = Joining(target: size, deadline: .now() + .nanoseconds(Int(min(took, 1_000_000))))
        if pending.isEmpty {
            gathering = 1
            while pending.isEmpty && !stopped {
                if !condition.wait(until: joining.date) { break }
            }
            gathering = 0
        }
        return joining
    }

    /// Jobs that joined the transaction under way: whatever is queued (up to the group's
    /// bound, never an exclusive job), else, while it holds fewer than the target and the
    /// deadline has not passed, the first to arrive. Nil when it should commit now.
    func takeJoining(_ joining: Joining, have: Int) -> [Job]? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let room = Writer.maxGroup - have
            if room > 0, let first = pending.first, first.exclusive == nil {
                let more = Array(pending.prefix(room).prefix { $0.exclusive == nil })
                pending.removeFirst(more.count)
                return more
            }
            guard have < joining.target, room > 0, pending.isEmpty, !stopped, DispatchTime.now() < joining.deadline else { return nil }
            gathering = 1
            let signalled = condition.wait(until: joining.date)
            gathering = 0
            if !signalled && pending.isEmpty { return nil }
        }
    }

    /// The fold a busy spell deferred, in its own transaction; begun only when a projection
    /// trails by `maxLag` or more. A failure here is left to the next commit's fold (a
    /// projection that cannot fold an event is marked stale inside it, never thrown).
    private func foldIdle() {
        do {
            let lagging = try environment.read { txn in
                try registry.lags(txn, dbs, head: try LogReader(txn: txn, dbs: dbs).head().seq, bound: registry.maxLag)
            }
            if lagging { _ = try environment.write { txn in try registry.foldLagging(txn, dbs, filings: filings) } }
        } catch {
            // Nothing to do: the next commit folds (its bound is at most groupFoldBound).
        }
    }
}
