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

        public init(readOnly: Bool = false) { self.readOnly = readOnly }
    }

    /// The LMDB environment.
    public let environment: Environment
    /// The projections maintained inline.
    public let registry: ProjectionRegistry
    let dbs: LogDatabases
    private let writer: Writer?

    /// Opens (creating if needed) the ledger at `path`. A writable open brings lagging
    /// projections up to the head (a version bump rebuilds that projection). What needs
    /// doing is read first: opening an up-to-date store begins no write transaction, and
    /// creating or converting one takes a single one (catching up, one per batch).
    /// - throws: ``LMDBError`` or ``LedgerError``.
    public init(path: String, options: Options = Options()) throws {
        var envOptions = options.environment
        envOptions.readOnly = options.readOnly
        environment = try Environment(path: path, options: envOptions)
        registry = options.projections
        if options.readOnly {
            guard let opened = try environment.read({ try LogDatabases.open($0) }) else {
                throw LedgerError(.invalidInput, "\(path) is not an ActionLedger store (it has no event log)")
            }
            dbs = opened
            writer = nil
        } else {
            let registry = registry
            let ready = try environment.read { txn -> LogDatabases? in
                guard let d = try LogDatabases.open(txn), !d.isLegacyLayout, try MetaLayout.isCurrent(d, txn),
                      try !ProjectionMaintenance.needsSetUp(registry, txn) else { return nil }
                return d
            }
            let opened = try ready ?? environment.write { txn -> LogDatabases in
                // A store of the layout before the log index is converted once, here.
                try LogDatabases.migrateLegacyLayout(txn)
                guard let d = try LogDatabases.open(txn) else { throw LedgerError(.storage, "cannot create the log") }
                try MetaLayout.backfill(d, txn)
                try ProjectionMaintenance.setUp(registry, txn)
                return d
            }
            dbs = opened
            try ProjectionMaintenance(environment: environment, dbs: opened, registry: registry).catchUp()
            writer = Writer(environment: environment, dbs: opened, registry: registry)
        }
    }

    deinit { writer?.stop() }

    /// Runs one command and returns once it is durable.
    /// - throws: ``LedgerError`` when refused (nothing appended), or a storage error.
    @discardableResult
    public func execute(_ request: CommandRequest) throws -> CommandResult {
        try execute(group: [request])[0].get()
    }

    /// Runs commands one by one in a single transaction (group commit): each gets its
    /// own result, and a refused one does not affect the others.
    public func execute(group requests: [CommandRequest]) throws -> [Result<CommandResult, LedgerError>] {
        guard let writer else { throw LedgerError(.readOnly, "the ledger was opened read-only; commands are refused") }
        return try writer.submit(preverify(requests), atomic: false)
    }

    /// Runs commands as one all-or-nothing batch: either all succeed or none is recorded.
    /// - throws: the first refusal, its `index` in ``LedgerError/details``.
    public func execute(batch requests: [CommandRequest]) throws -> [CommandResult] {
        guard let writer else { throw LedgerError(.readOnly, "the ledger was opened read-only; commands are refused") }
        return try writer.submit(preverify(requests), atomic: true).map { try $0.get() }
    }

    /// Appends events verbatim in one transaction, all or nothing: restoring an export
    /// (`ledger import`) or setting up a scenario. Each event's seq must follow the head;
    /// where a hash is given it must equal the chain hash computed here. Indexes and
    /// inline projections are updated as for any append.
    /// - throws: ``LedgerError`` `invalid_input` / `integrity_failure` naming the seq.
    public func append(verbatim events: [(event: Event, hash: Digest?)]) throws {
        guard let writer else { throw LedgerError(.readOnly, "the ledger was opened read-only; commands are refused") }
        try writer.perform { session in
            for (event, hash) in events {
                try session.appendVerbatim(event, expectedHash: hash)
                // Restored commands stay idempotent: a replayed command id appends nothing.
                // A recorded refusal's id was never registered (a queued replay may still run).
                if event.type != .tapRefused { try session.indexVerbatimCommand(event.commandId, seq: event.seq) }
            }
        }
    }

    /// Runs `body` alone in one write transaction of the writer (maintenance: import, store creation).
    func perform(_ body: @escaping (AppendSession) throws -> Void) throws {
        guard let writer else { throw LedgerError(.readOnly, "the ledger was opened read-only; commands are refused") }
        try writer.perform(body)
    }

    /// Runs `body` with a reader over one consistent snapshot.
    public func read<T>(_ body: (LogReader) throws -> T) throws -> T {
        try environment.read { txn in try body(LogReader(txn: txn, dbs: dbs)) }
    }
}
