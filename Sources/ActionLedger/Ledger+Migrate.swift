import Foundation

/// What `ledger migrate` did.
public struct MigrationReport: Sendable {
    /// Why the store needed converting (nil: it was current, nothing was done).
    public var reason: String?
    /// The log's events (never changed by a migration).
    public var events: UInt64
    /// Projections rebuilt from the log (their stored version was not this build's).
    public var rebuilt: [String]
    public var seconds: Double

    public var json: JSON {
        ["migrated": .bool(reason != nil), "reason": reason.map(JSON.string) ?? .null, "events": .number(Double(events)),
         "rebuilt": .array(rebuilt.map(JSON.string)), "seconds": .number(seconds)]
    }
}

/// A migration under way, kept in the log's `meta` index (`migrating`: the reason, a line
/// feed, the projections it rebuilds joined by commas) from the transaction that converts the
/// layout until every projection has been folded to the head. While it is there the store is
/// one to migrate: an open neither takes writes nor folds projections (the fold would run
/// before migrate's lock and chain check), and a resumed `ledger migrate` reports what the
/// interrupted one set out to do.
struct MigrationMark: Equatable {
    static let key: [UInt8] = Array("migrating".utf8)
    var reason: String
    var rebuilt: [String]

    static func read(_ dbs: LogDatabases, _ txn: Transaction) throws -> MigrationMark? {
        try dbs.meta.withValue(txn, key: key) { b in
            let text = String(decoding: b, as: UTF8.self)
            guard let newline = text.firstIndex(of: "\n") else { return MigrationMark(reason: text, rebuilt: []) }
            let names = text[text.index(after: newline)...]
            return MigrationMark(reason: String(text[..<newline]), rebuilt: names.isEmpty ? [] : names.split(separator: ",").map(String.init))
        }
    }

    func write(_ dbs: LogDatabases, _ txn: Transaction) throws {
        try dbs.meta.put(txn, key: Self.key, value: Array((reason + "\n" + rebuilt.joined(separator: ",")).utf8))
    }

    static func clear(_ dbs: LogDatabases, _ txn: Transaction) throws {
        try dbs.meta.delete(txn, key: key)
    }
}

/// Which older layouts an open refuses writes for, and how `ledger migrate` converts them.
enum Migration {
    /// Why a store must be migrated before it takes writes; nil when it is current. A store
    /// with no events whose projections are not set up is not a migration: its open sets
    /// them up.
    static func reason(_ dbs: LogDatabases, _ registry: ProjectionRegistry, _ txn: Transaction) throws -> String? {
        if dbs.isLegacyLayout { return "its log predates the log index" }
        let head = try LogReader(txn: txn, dbs: dbs).head().seq
        if try txn.openDatabase(ProjectionMaintenance.legacyMetaDatabase, create: false) != nil {
            return "its projections are of layout 1"
        }
        let layout = try MetaLayout.layout(dbs, txn)
        if layout > MetaLayout.current { return MetaLayout.newerBuild(layout) }
        if let mark = try MigrationMark.read(dbs, txn) { return "a migration was interrupted (\(mark.reason))" }
        guard head > 0 else { return nil }
        if layout != MetaLayout.current { return "its meta records predate layout \(MetaLayout.current)" }
        for p in registry.projections {
            guard let meta = try registry.meta(p.name, in: txn) else { return "projection \(p.name) was never built" }
            if meta.version != p.version {
                return "projection \(p.name) is version \(meta.version); this build keeps version \(p.version)"
            }
        }
        return nil
    }
}

extension Ledger {
    /// Converts a store written by an older build, in place: the log's layout and `meta`
    /// records, then every projection of another version rebuilt from the log. The log's
    /// events are never touched. It first verifies the whole hash chain and refuses
    /// (`integrity_failure`) to convert a log that does not verify, and it holds the
    /// rebuild lock (`busy` when a rebuild runs). Resumable: killed half-way, it is run
    /// again. Reopen the ledger afterwards to write.
    /// - throws: `read_only`, `busy`, `integrity_failure`, or a storage error.
    public func migrate() throws -> MigrationReport {
        let started = ContinuousClock.now
        guard !environment.isReadOnly else { throw LedgerError(.readOnly, "a migration writes; open the ledger writable") }
        // The lock and the chain check come first even for a current store: an operator who
        // runs migrate as a step of an upgrade must not be told "nothing to do" about a log
        // that does not verify, or while a rebuild is rewriting its projections.
        let lock = try RebuildLock(ledgerPath: environment.path)
        defer { withExtendedLifetime(lock) {} }
        _ = try verify()
        let head = try read { try $0.head().seq }
        // Judged again under the lock: another process may have migrated (or begun to) since
        // this handle was opened.
        let registry = registry
        guard let opened = migrationNeeded,
              let reason = dbs.isLegacyLayout ? opened : try read({ try Migration.reason($0.dbs, registry, $0.txn) }) else {
            return MigrationReport(reason: nil, events: head, rebuilt: [], seconds: 0)
        }
        // A store of a newer build is never converted down (its records this build does not know
        // would be lost): only the build that wrote it, or a later one, opens it for writes.
        let layout = try read { r in try MetaLayout.layout(r.dbs, r.txn) }
        if layout > MetaLayout.current {
            throw LedgerError(.invalidInput, "\(environment.path) was written by a newer build (\(reason)); this build converts "
                + "older stores only: use the newer build")
        }
        let (dbs, mark) = try beginMigration(reason: reason)
        try ProjectionMaintenance(environment: environment, dbs: dbs, registry: registry).catchUp()
        try environment.write { txn in try MigrationMark.clear(dbs, txn) }
        return MigrationReport(reason: mark.reason, events: head, rebuilt: mark.rebuilt,
                               seconds: (ContinuousClock.now - started) / .seconds(1))
    }

    /// Migrate's conversion, one write transaction: the log's layout and `meta` records,
    /// every projection of another version emptied, and the ``MigrationMark`` naming them,
    /// which stays until their folds are done. Run again on a resumed migration (each step
    /// is a no-op once done), it keeps the interrupted run's reason and projections and adds
    /// any this build finds stale besides (another build may have begun it).
    func beginMigration(reason: String) throws -> (LogDatabases, MigrationMark) {
        let registry = registry
        return try environment.write { txn in
            try LogDatabases.migrateLegacyLayout(txn)
            guard let d = try LogDatabases.open(txn) else { throw LedgerError(.storage, "cannot open the log") }
            try MetaLayout.backfill(d, txn)
            let stale = try registry.projections.filter { try registry.meta($0.name, in: txn)?.version != $0.version }.map(\.name)
            try ProjectionMaintenance.setUp(registry, txn)
            var mark = try MigrationMark.read(d, txn) ?? MigrationMark(reason: reason, rebuilt: [])
            mark.rebuilt += stale.filter { !mark.rebuilt.contains($0) }
            try mark.write(d, txn)
            return (d, mark)
        }
    }
}
