import Foundation

/// A group's write transaction: its commands run optimistically in one transaction, or
/// each nested when a refusal came after a write (see ``Writer``).
extension Writer {
    /// Commits `group` and the jobs that join it; returns them all (their results or
    /// failure set), in order.
    @discardableResult
    func commit(_ group: [Job], joining: Joining? = nil) -> [Job] {
        let taken = Taken(group)
        do {
            let results: [[Result<CommandResult, LedgerError>]]
            do {
                results = try transaction(taken, isolated: false, joining: joining)
            } catch is WroteBeforeRefusal {
                // Rare: a command was refused after it had written. The optimistic
                // transaction was aborted; redo the group (joined jobs too) with each command nested.
                results = try transaction(taken, isolated: true, joining: nil)
            }
            for (job, r) in zip(taken.jobs, results) { job.results = r }  // empty for an exclusive job
        } catch {
            for job in taken.jobs { job.failure = error }
        }
        return taken.jobs
    }

    /// The jobs a transaction has taken: its group, then those that joined it. Kept across
    /// a redo (the map grew, or the isolated retry), which runs them all again.
    fileprivate final class Taken {
        var jobs: [Job]
        init(_ jobs: [Job]) { self.jobs = jobs }
    }

    /// Thrown out of an optimistic transaction when a refused command had already written:
    /// only a nested transaction can take back its writes.
    fileprivate struct WroteBeforeRefusal: Error {}

    /// One write transaction for `group`. Optimistic (`isolated == false`), commands run
    /// straight in the transaction: a refusal that wrote nothing needs no rollback, and
    /// nearly every refusal is decided before the first write. Child transactions are
    /// costly in LMDB (each copies every page it touches), so they are only used
    /// (`isolated`) when a refusal came after a write.
    fileprivate func transaction(_ taken: Taken, isolated: Bool, joining: Joining?) throws -> [[Result<CommandResult, LedgerError>]] {
        // The closure may run again after the map grows: results are rebuilt each time.
        try environment.write { txn in
            let session = try AppendSession(txn: txn, dbs: dbs)
            let group = taken.jobs
            if let exclusive = group[0].exclusive {
                try exclusive(session)
                try session.finish()
                try registry.fold(after: session)
                return []
            }
            var results = try group.map { job in try run(job, session, isolated: isolated) }
            while let joining, let more = takeJoining(joining, have: taken.jobs.count) {
                taken.jobs += more
                results += try more.map { job in try run(job, session, isolated: isolated) }
            }
            try session.finish()
            try registry.fold(after: session, bound: taken.jobs.count > 1 ? groupFoldBound : nil, filings: filings)
            return results
        }
    }

    fileprivate func run(_ job: Job, _ session: AppendSession, isolated: Bool) throws -> [Result<CommandResult, LedgerError>] {
        if job.atomic {
            let writes = session.writes
            do {
                let batch = {
                    try job.requests.enumerated().map { i, request in
                        do {
                            let result = try CommandHandler.run(request, in: session, learning: &self.filings)
                            // All or nothing: an item refused, even with its refusal recorded,
                            // refuses the batch, and the rollback takes its tap.refused back.
                            if let refusal = result.refusal { throw refusal }
                            return result
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
                let command = { try CommandHandler.run(request, in: session, learning: &self.filings) }
                let result = try isolated ? session.nested(command) : command()
                // Refused, but authenticated: its tap.refused stays written.
                if let refusal = result.refusal { return .failure(refusal) }
                return .success(result)
            } catch let error as LedgerError {
                if !isolated && session.writes != writes { throw WroteBeforeRefusal() }
                return .failure(error)
            }
        }
    }
}
