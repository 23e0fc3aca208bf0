import CLMDB

/// The keyed records beside the log: the policy in force, a person's org, the day's
/// auto-ship counts and the commands already run.
extension LogReader {
    /// The policy in force: the latest `policy.set`, or the built-in version 0.
    /// - throws: `corrupt_event` when the pointer is damaged or names anything but a
    ///   `policy.set`: falling back to the built-in policy would silently loosen the rules.
    public func policy() throws -> PolicyDocument {
        try policy(at: MetaKey.policy) ?? .builtIn
    }

    /// The policy in force for `org`'s actions (rules version 2: a policy applies to its
    /// org only): that org's latest `policy.set`, else the built-in version 0. A store
    /// written before per-org pointers falls back to the latest `policy.set` if it is `org`'s.
    public func policy(org: String) throws -> PolicyDocument {
        if let p = try policy(at: MetaKey.policy(org: org)) { return p }
        // Once the per-org pointers cover the log (MetaLayout), no pointer means no policy:
        // only an older store's read needs the fallback (and its extra decode per command).
        if try MetaLayout.hasOrgRecords(dbs, txn) { return .builtIn }
        guard let latest = try latestPolicyEvent(), latest.org == org, case .policySet(let p) = latest.payload else { return .builtIn }
        return p
    }

    private func latestPolicyEvent() throws -> Event? {
        guard let seq = try dbs.meta.withValue(txn, key: MetaKey.policy, { $0.count == 8 ? Keys.readU64($0) : nil }),
              let seq else { return nil }
        return try event(seq)?.event
    }

    /// The org a person is bound to: the org of the first event naming the person with one
    /// (a device link or a proposal, rules version 2); nil before any.
    public func personOrg(_ person: String) throws -> String? {
        try dbs.meta.withValue(txn, key: MetaKey.person(person)) { String(decoding: $0, as: UTF8.self) }
    }

    private func policy(at key: [UInt8]) throws -> PolicyDocument? {
        let seq = try dbs.meta.withValue(txn, key: key) { b in
            guard b.count == 8 else { throw Self.corruptRecord("meta", "policy", length: b.count, expected: 8) }
            return Keys.readU64(b)
        }
        guard let seq else { return nil }
        let e = try event(seq)?.event
        guard case .policySet(let p)? = e?.payload else {
            throw LedgerError(.corruptEvent, "meta record policy points to seq \(seq), "
                + (e.map { "a \($0.type.name), not a policy.set" } ?? "which holds no event"),
                details: ["index": "meta", "key": "policy", "seq": .number(Double(seq))])
        }
        return p
    }

    /// Auto-ships recorded for `person` on UTC `day`.
    public func autoShipped(person: String, day: Int64) throws -> Int {
        try dbs.autoShipDays.withValue(txn, key: Keys.composite(person, UInt64(bitPattern: day))) { b in
            guard b.count == 8, Keys.readU64(b) <= UInt64(Int.max) else {
                throw Self.corruptRecord("autoship_days", "(\(person), day \(day))", length: b.count, expected: 8)
            }
            return Int(Keys.readU64(b))
        } ?? 0
    }

    /// The seqs a command appended, when it already ran.
    public func command(_ commandId: String) throws -> (first: UInt64, count: Int)? {
        try dbs.commands.withValue(txn, key: commandId.utf8) { b in
            guard b.count == 12 else { throw Self.corruptRecord("commands", commandId, length: b.count, expected: 12) }
            let first = Keys.readU64(b), count = UInt32(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            // Callers add the two: a damaged record is refused here, never an overflow trap.
            guard first >= 1, first <= Self.maxSeq, count >= 1, count <= Self.maxCommandEvents else {
                throw LedgerError(.corruptEvent, "the commands index entry of \(commandId) is damaged (first seq \(first), "
                    + "\(count) events): run ledger verify", details: ["index": "commands", "key": .string(commandId)])
            }
            return (first, Int(count))
        }
    }

    /// The highest seq a stored record may name (the log's seqs stay far below it).
    static let maxSeq = UInt64(Int64.max / 2)
    /// The most events a `commands` record may count. The engine writes one or two per
    /// command; the bound keeps a damaged count from sending a replay through billions of
    /// lookups inside the write transaction.
    static let maxCommandEvents: UInt32 = 1 << 16

    /// A `commands` value, as ``command(_:)`` reads it: the first seq (8 bytes BE), then
    /// how many events the command appended (4 bytes BE).
    static func commandRecord(first: UInt64, count: Int) -> [UInt8] {
        var v = Keys.u64(first)
        withUnsafeBytes(of: UInt32(count).bigEndian) { v.append(contentsOf: $0) }
        return v
    }
}
