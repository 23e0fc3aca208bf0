/// The `meta` records of rules version 2 — each org's policy pointer (`policy/ORG`) and
/// each person's org (`person/P`) — exist for the whole log once `layout` says 2; each
/// WebAuthn key's last signature counter (`sign_count/KEY`, Keys/SignCount) once it says 3.
/// A store written before them gets them once, from one pass over the log (`ledger
/// migrate`); from then on every append keeps them, and `verify --deep` checks them strictly.
enum MetaLayout {
    static let key: [UInt8] = Array("layout".utf8)
    static let current: UInt8 = 3

    /// The layout `meta` says its records cover (0 before layouts were recorded).
    static func layout(_ dbs: LogDatabases, _ txn: Transaction) throws -> UInt8 {
        try dbs.meta.withValue(txn, key: key) { $0.count == 1 ? $0[0] : 0 } ?? 0
    }

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
        try reader.forEach { stored in
            let e = stored.event
            signCounts.fold(e)
            switch e.type {
            case .policySet: policies[e.org] = e.seq
            case .deviceLinked, .actionProposed: if people[e.person] == nil { people[e.person] = e.org }
            default: break
            }
            return true
        }
        for (org, seq) in policies { try dbs.meta.put(txn, key: MetaKey.policy(org: org), value: Keys.u64(seq)) }
        for (person, org) in people where try reader.personOrg(person) == nil {
            try dbs.meta.put(txn, key: MetaKey.person(person), value: Array(org.utf8))
        }
        try signCounts.write(dbs, txn)
        try dbs.meta.put(txn, key: key, value: [current])
    }
}
