/// The `meta` records of rules version 2 — each org's policy pointer (`policy/ORG`) and
/// each person's org (`person/P`) — exist for the whole log once `layout` says 2; each
/// WebAuthn key's last signature counter (`sign_count/KEY`, Keys/SignCount) once it says 3;
/// and once it says 4, every recorded refusal's command id in `commands` (a refusal spends
/// its proof: policy.md §7), which a build before that rule left unregistered.
/// A store written before them gets them once, from one pass over the log (`ledger
/// migrate`); from then on every append keeps them, and `verify --deep` checks them strictly.
enum MetaLayout {
    static let key: [UInt8] = Array("layout".utf8)
    static let current: UInt8 = 4

    /// The layout `meta` says its records cover (0 before layouts were recorded).
    /// - throws: `corrupt_event` for a marker that is not one byte: read as 0, it would send
    ///   the store through `migrate` and rewrite whatever wrote it.
    static func layout(_ dbs: LogDatabases, _ txn: Transaction) throws -> UInt8 {
        try dbs.meta.withValue(txn, key: key) { b in
            guard b.count == 1 else { throw LogReader.corruptRecord("meta", "layout", length: b.count, expected: 1) }
            return b[0]
        } ?? 0
    }

    /// Why a store whose marker is above this build's layout cannot be written or queried.
    static func newerBuild(_ layout: UInt8) -> String {
        "its meta records are of layout \(layout), newer than this build's \(current): " + newerBuildSuffix
    }
    static let newerBuildSuffix = "a newer build wrote it"
    /// Whether a migration reason (``Ledger/migrationNeeded``) is ``newerBuild(_:)``'s.
    static func isNewerBuild(_ reason: String) -> Bool { reason.hasSuffix(newerBuildSuffix) }

    /// Whether `meta` holds the current layout's records.
    static func isCurrent(_ dbs: LogDatabases, _ txn: Transaction) throws -> Bool {
        try layout(dbs, txn) == current
    }

    /// Whether `meta` holds rules version 2's records (layout 2 and later).
    static func hasOrgRecords(_ dbs: LogDatabases, _ txn: Transaction) throws -> Bool {
        try layout(dbs, txn) >= 2
    }

    /// Writes every per-org policy pointer and person binding the log implies, then the
    /// layout marker; in the open's one write transaction.
    static func backfill(_ dbs: LogDatabases, _ txn: Transaction) throws {
        guard try !isCurrent(dbs, txn) else { return }
        let reader = LogReader(txn: txn, dbs: dbs)
        var policies: [String: UInt64] = [:]
        var people: [String: String] = [:]
        var signCounts = SignCounts()
        var refusals: [(commandId: String, seq: UInt64)] = []
        try reader.forEach { stored in
            let e = stored.event
            signCounts.fold(e)
            switch e.type {
            case .policySet: policies[e.org] = e.seq
            case .deviceLinked, .actionProposed: if people[e.person] == nil { people[e.person] = e.org }
            case .tapRefused: refusals.append((e.commandId, e.seq))
            default: break
            }
            return true
        }
        // A refusal recorded before its id was registered: registered now, so its proof
        // cannot be submitted again. An id a later command already took stays that
        // command's (`audit replay` reports it: `refusal.replayed`).
        for (commandId, seq) in refusals where try reader.command(commandId) == nil {
            try dbs.commands.put(txn, key: commandId.utf8, value: LogReader.commandRecord(first: seq, count: 1), flags: .noOverwrite)
        }
        for (org, seq) in policies { try dbs.meta.put(txn, key: MetaKey.policy(org: org), value: Keys.u64(seq)) }
        for (person, org) in people where try reader.personOrg(person) == nil {
            try dbs.meta.put(txn, key: MetaKey.person(person), value: Array(org.utf8))
        }
        try signCounts.write(dbs, txn)
        try dbs.meta.put(txn, key: key, value: [current])
    }
}
