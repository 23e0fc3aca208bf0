/// A consistent, read-only view of the projections at one log head: every query reads
/// through one. A projection's stored state trails the head by fewer than
/// ``ProjectionRegistry/maxLag`` events; the snapshot folds that tail in memory, so answers
/// are exactly at the head. It refuses a projection of another version or too far behind
/// (`projection_stale`) instead of answering from old state.
///
/// ```swift
/// let feed = try ledger.query { try $0.today(TodayQuery(person: "quinn", now: now)) }
/// ```
public struct ProjectionSnapshot {
    /// The transaction the snapshot reads (read or write).
    public let txn: Transaction
    /// The log head the projections must be at.
    public let head: UInt64
    let registry: ProjectionRegistry
    /// The log's databases (queries also read its per-action index).
    let dbs: LogDatabases
    /// Stores already brought to the head in this snapshot: the tail is folded once per projection.
    private let cache = StoreCache()

    private final class StoreCache {
        var stores: [String: ProjectionStore] = [:]
        var actions: [String: ActionInfo] = [:]
    }

    /// A snapshot over `txn`, e.g. inside `Environment.read`.
    /// - throws: ``LedgerError`` `invalid_input` when the environment holds no log.
    public init(_ txn: Transaction, registry: ProjectionRegistry = .standard) throws {
        guard let dbs = try LogDatabases.open(txn) else {
            throw LedgerError(.invalidInput, "\(txn.environment.path) is not an ActionLedger store (it has no event log)")
        }
        try self.init(txn, dbs: dbs, registry: registry)
    }

    init(_ txn: Transaction, dbs: LogDatabases, registry: ProjectionRegistry) throws {
        self.txn = txn
        self.registry = registry
        self.dbs = dbs
        head = try LogReader(txn: txn, dbs: dbs).head().seq
        // The projections of a store whose log records predate the current layout were never
        // checked against them (`verify --deep` cannot compare them either): answered only once
        // `ledger migrate` has converted and verified it. The marker is bookkeeping outside
        // the chain, so a marker set back by hand is refused here too, never trusted.
        let layout = try MetaLayout.layout(dbs, txn)
        // An empty log has nothing to answer wrongly (and `migrate` has nothing to convert in it).
        guard layout == MetaLayout.current || (head == 0 && layout < MetaLayout.current) else {
            throw LedgerError(.projectionStale, "\(txn.environment.path) holds layout \(layout) of the log's records, this build "
                + "reads layout \(MetaLayout.current): " + (layout > MetaLayout.current ? "a newer build wrote it; query it with that build"
                    : "run `ledger migrate` to convert the store"), details: ["layout": .number(Double(layout))])
        }
    }

    /// The named projection's state at the head, refusing a stale one (`projection_stale`).
    public func store(_ name: String) throws -> ProjectionStore {
        if let store = cache.stores[name] { return store }
        let store = try registry.readStore(name, reader: LogReader(txn: txn, dbs: dbs), head: head)
        cache.stores[name] = store
        return store
    }

    /// The org `person` belongs to (a person belongs to one), as the log's index has it.
    public func personOrg(_ person: String) throws -> String? {
        try LogReader(txn: txn, dbs: dbs).personOrg(person)
    }

    /// `actionId`'s proposal as its events are described (read once per snapshot).
    func describe(_ actionId: String) throws -> ActionInfo {
        if let known = cache.actions[actionId] { return known }
        let info = try LogReader(txn: txn, dbs: dbs).actionInfo(actionId)
        cache.actions[actionId] = info
        return info
    }

    /// The named projection's stored state, at its checkpoint (up to `maxLag - 1` events
    /// behind the head): for a query that can tell the tail does not concern it, which
    /// then skips folding it.
    func storedStore(_ name: String) throws -> ProjectionStore {
        if let store = cache.stores[name] { return store }
        return try registry.storedStore(name, in: txn, head: head).1
    }
}

extension Ledger {
    /// Runs `body` over one read snapshot of the projections.
    public func query<T>(_ body: (ProjectionSnapshot) throws -> T) throws -> T {
        // The log's handles are reopened in the snapshot: in a read-only environment,
        // handles opened by an earlier (aborted) read transaction are no longer valid.
        try environment.read { txn in try body(try ProjectionSnapshot(txn, registry: registry)) }
    }
}

/// Continuation of a paged listing: the hex of the last key returned (after its id
/// prefix). Opaque to callers; stable across processes.
public struct PageToken: Sendable, Equatable, CustomStringConvertible {
    let bytes: [UInt8]

    init(_ bytes: some Collection<UInt8>) { self.bytes = Array(bytes) }

    /// Parses a token printed by an earlier page.
    /// - throws: `invalid_input` when it is not one.
    public init(_ text: String, length: Int) throws {
        guard let decoded = Hex.decode(text), decoded.count == length else { throw Self.notPrinted(text) }
        bytes = decoded
    }

    /// Parses a token printed as `length` bytes of position followed by `tag` (what the
    /// listing lists, ``ProjectionSnapshot/queryTag(_:)``); keeps the position.
    /// - throws: `invalid_input` when it is not one, or another listing's.
    init(_ text: String, length: Int, tag: [UInt8]) throws {
        let token = try PageToken(text, length: length + tag.count)
        guard token.bytes[length...].elementsEqual(tag) else { throw Self.notPrinted(text) }
        bytes = Array(token.bytes.prefix(length))
    }

    static func notPrinted(_ text: String) -> LedgerError {
        LedgerError(.invalidInput, "page token \(text) is not one this query printed", details: ["field": "page_token"])
    }

    /// The token as printed: lowercase hex of the key.
    public var description: String { Hex.encode(bytes) }
}
