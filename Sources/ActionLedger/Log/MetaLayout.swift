/// The `meta` records of rules version 2 — each org's policy pointer (`policy/ORG`) and
/// each person's org (`person/P`) — exist for the whole log once `layout` says 2. A store
/// written before them gets them once, on its first writable open, from one pass over the
/// log; from then on every append keeps them, and `verify --deep` checks them strictly.
enum MetaLayout {
    static let key: [UInt8] = Array("layout".utf8)
    static let current: UInt8 = 2

    /// Whether `meta` holds the current layout's records.
    static func isCurrent(_ dbs: LogDatabases, _ txn: Transaction) throws -> Bool {
        try dbs.meta.withValue(txn, key: key) { $0.count == 1 && $0[0] == current } ?? false
    }

    /// Writes every per-org policy pointer and person binding the log implies, then the
    /// layout marker; in the open's one write transaction.
    static func backfill(_ dbs: LogDatabases, _ txn: Transaction) throws {
        guard try !isCurrent(dbs, txn) else { return }
        let reader = LogReader(txn: txn, dbs: dbs)
        var policies: [String: UInt64] = [:]
        var people: [String: String] = [:]
        try reader.forEach { stored in
            let e = stored.event
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
        try dbs.meta.put(txn, key: key, value: [current])
    }
}
