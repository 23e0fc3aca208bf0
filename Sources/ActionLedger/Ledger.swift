import Foundation

/// An ActionLedger store: the event log, its indexes and inline projections in one LMDB
/// environment, whose writer group-commits concurrent commands.
///
/// ```swift
/// let ledger = try Ledger(path: "quinn.lmdb")
/// let result = try ledger.execute(CommandRequest(.tap(.approve, actionId: "a1", device: "iphone"),
///                                                now: Timestamp(iso8601: "2026-11-22T09:00:00Z")!))
/// ```
public final class Ledger: Sendable {
    /// How to open a ledger.
    public struct Options: Sendable {
        /// Open the environment `MDB_RDONLY`: queries only; every command is refused.
        public var readOnly = false
        /// Passed to LMDB (map size, opt-in no-sync for benchmark fixtures).
        public var environment = Environment.Options()
        /// The projections kept inline; ``ProjectionRegistry/standard`` by default.
        public var projections: ProjectionRegistry = .standard
        /// Refuse a file that holds no event log instead of setting one up in it: every
        /// opener but `ledger init`, `demo` and `import` (another LMDB file, such as the
        /// server's sessions store beside the store, would otherwise become a log without
        /// its `store.created`).
        public var requireLog = false

        public init(readOnly: Bool = false, requireLog: Bool = false) {
            self.readOnly = readOnly
            self.requireLog = requireLog
        }
    }

    /// The LMDB environment.
    public let environment: Environment
    /// The projections maintained inline.
    public let registry: ProjectionRegistry
    let dbs: LogDatabases
    /// The writer, and why there is none yet (``migrationNeeded``).
    private let slot: WriterSlot
    /// The proof report's counts by window, kept for its next page.
    let proofCounts = ProofCountCache()
    /// Why this store must be converted by `ledger migrate` before it takes writes (it was
    /// written by an older build); nil when it is current, or once converted since the open.
    public var migrationNeeded: String? { slot.lock.withLock { slot.reason } }

    /// Whether the store was written by a newer build (its layout is above this build's):
    /// it is never converted down, and only that build or a later one reads it fully.
    public var writtenByNewerBuild: Bool { migrationNeeded.map(MetaLayout.isNewerBuild) ?? false }

    /// Safe to share: `writer` and `reason` are only touched with `lock` held.
    private final class WriterSlot: @unchecked Sendable {
        let lock = NSLock()
        var writer: Writer?
        var reason: String?
        init(writer: Writer?, reason: String?) { (self.writer, self.reason) = (writer, reason) }
    }

    /// Opens (creating if needed) the ledger at `path`. A writable open brings lagging
    /// projections up to the head. What needs doing is read first: opening an up-to-date
    /// store begins no write transaction, and creating one takes a single one (catching
    /// up, one per batch). A store written by an older build is never converted by an open:
    /// it opens for reading the log, its writes are refused with `migration_required`
    /// (``migrationNeeded`` says why) until ``migrate(path:options:progress:)`` converts it.
    /// - throws: ``LMDBError`` or ``LedgerError``.
    public init(path: String, options: Options = Options()) throws {
        var envOptions = options.environment
        envOptions.readOnly = options.readOnly
        environment = try Environment(path: path, options: envOptions)
        registry = options.projections
        let registry = registry
        // One read transaction says what the open has to do: nothing, set up a new store,
        // or refuse writes until `ledger migrate`.
        let (existing, reason, setUp) = try environment.read { txn -> (LogDatabases?, String?, Bool) in
            guard let d = try LogDatabases.open(txn) else { return (nil, nil, true) }
            let reason = try Migration.reason(d, registry, txn)
            return (d, reason, try reason == nil && ProjectionMaintenance.needsSetUp(registry, txn))
        }
        if options.readOnly || reason != nil || (options.requireLog && existing == nil) {
            guard let existing else {
                throw LedgerError(.invalidInput, "\(path) is not an ActionLedger store (it has no event log)")
            }
            dbs = existing
            slot = WriterSlot(writer: nil, reason: reason)
        } else {
            // A new store, or an empty one whose projections are not set up, is set up here.
            let opened = try !setUp ? existing! : environment.write { txn -> LogDatabases in
                // A new store: its log, its layout marker and empty projections, in one transaction.
                guard let d = try LogDatabases.open(txn) else { throw LedgerError(.storage, "cannot create the log") }
                try MetaLayout.backfill(d, txn)
                try ProjectionMaintenance.setUp(registry, txn)
                return d
            }
            dbs = opened
            try ProjectionMaintenance(environment: environment, dbs: opened, registry: registry).catchUp()
            slot = WriterSlot(writer: Writer(environment: environment, dbs: opened, registry: registry), reason: nil)
        }
    }

    /// The writer, or the refusal of a store that cannot take writes. A store that needed
    /// `ledger migrate` when it was opened is looked at again: once converted (by another
    /// process, say, while `ledger serve` runs) it takes writes without a reopen — unless its
    /// log's own layout changed, which needs one.
    func requireWriter() throws -> Writer {
        try slot.lock.withLock {
            if let writer = slot.writer { return writer }
            if let reason = slot.reason {
                // A log of the layout before its index is opened through other databases:
                // converted or not, this handle cannot write it.
                let now: String? = dbs.isLegacyLayout ? reason : try environment.read { try Migration.reason(dbs, registry, $0) }
                if let now {
                    slot.reason = now
                    throw LedgerError(.migrationRequired, MetaLayout.isNewerBuild(now)
                        ? "\(environment.path) cannot take writes from this build (\(now))"
                        : "\(environment.path) was written by an older build (\(now)): "
                            + "run `ledger migrate --db \(environment.path)` to convert it"
                            + (dbs.isLegacyLayout ? ", then open it again" : ""))
                }
                if !environment.isReadOnly {
                    slot.reason = nil
                    let writer = Writer(environment: environment, dbs: dbs, registry: registry)
                    slot.writer = writer
                    return writer
                }
                slot.reason = nil
            }
            throw LedgerError(.readOnly, "the ledger was opened read-only; commands are refused")
        }
    }

    deinit { slot.writer?.stop() }

    /// Runs one command and returns once it is durable.
    /// - throws: ``LedgerError`` when refused (nothing appended), or a storage error.
    @discardableResult
    public func execute(_ request: CommandRequest) throws -> CommandResult {
        try execute(group: [request])[0].get()
    }

    /// Runs commands one by one in a single transaction (group commit): each gets its
    /// own result, and a refused one does not affect the others.
    public func execute(group requests: [CommandRequest]) throws -> [Result<CommandResult, LedgerError>] {
        return try requireWriter().submit(preverify(requests), atomic: false)
    }

    /// Runs commands as one all-or-nothing batch: either all succeed or none is recorded.
    /// - throws: the first refusal, its `index` in ``LedgerError/details``.
    public func execute(batch requests: [CommandRequest]) throws -> [CommandResult] {
        return try requireWriter().submit(preverify(requests), atomic: true).map { try $0.get() }
    }

    /// Appends events verbatim in one transaction, all or nothing: restoring an export
    /// (`ledger import`) or setting up a scenario. Each event's seq must follow the head;
    /// where a hash is given it must equal the chain hash computed here. Indexes and
    /// inline projections are updated as for any append.
    /// - throws: ``LedgerError`` `invalid_input` / `integrity_failure` naming the seq.
    public func append(verbatim events: [(event: Event, hash: Digest?)]) throws {
        try requireWriter().perform { session in
            for (event, hash) in events {
                try session.appendVerbatim(event, expectedHash: hash)
                // Restored commands stay idempotent: a replayed command id appends nothing (a
                // recorded refusal's too: its proof is spent).
                try session.indexVerbatimCommand(event.commandId, seq: event.seq)
            }
        }
    }

    /// Runs `body` alone in one write transaction of the writer (maintenance: import, store creation).
    func perform(_ body: @escaping (AppendSession) throws -> Void) throws {
        try requireWriter().perform(body)
    }

    /// Runs `body` with a reader over one consistent snapshot.
    public func read<T>(_ body: (LogReader) throws -> T) throws -> T {
        try environment.read { txn in try body(LogReader(txn: txn, dbs: dbs)) }
    }
}
