import Foundation
@testable import ActionLedger

/// A ledger holding one event of (nearly) every type, and direct LMDB access to tamper
/// with it the way an attacker with write access to the file would.
enum IntegrityFixtures {
    /// Every event type the engine writes in ordinary use, with optional fields both set and unset.
    static func populate(_ l: Ledger) throws {
        try l.link("iphone")
        try l.link("laptop", platform: .web)
        try l.link("old-phone")
        try l.run(.revokeDevice(device: "old-phone", reason: "lost"))
        try l.run(.setPolicy(PolicyDocument(raise: [.init(kind: "price_change", stakes: .high)]), org: "quinn-co"))
        try l.run(.propose(proposal("a1", stakes: .medium)))
        try l.run(.tap(.review, actionId: "a1", device: "iphone"))
        try l.run(.tap(.approve, actionId: "a1", device: "laptop"))
        try l.run(.recordOutcome(actionId: "a1", succeeded: true, outcome: ["post_id": "of-1"]))
        try l.run(.propose(proposal("a2", stakes: .high, expiresAt: t0.adding(milliseconds: Timestamp.day))))
        try l.run(.edit(actionId: "a2", device: "iphone", text: "Edited caption ✓"))
        try l.run(.hold(actionId: "a2", device: "iphone", until: t0.adding(milliseconds: Timestamp.hour)))
        try l.run(.dismiss(actionId: "a2", device: "laptop", reason: "not this week"))
        try l.run(.propose(proposal("a3", stakes: .low, confidence: 0.95)))  // auto-ships
    }

    /// Runs `body` in a write transaction on the ledger's own environment with the
    /// `events` database and the head record's range of `log_index`: a direct write,
    /// bypassing the engine.
    static func tamper(_ l: Ledger, _ body: (Transaction, Database, LogIndex) throws -> Void) throws {
        try l.environment.write { txn in
            try body(txn, try txn.openDatabase("events")!, try LogDatabases.open(txn)!.head)
        }
    }

    static func raw(_ l: Ledger, _ seq: UInt64) throws -> [UInt8] {
        try l.read { try $0.withRawEvent(seq) { Array($0) } }!
    }

    /// The `integrity_failure` verification throws, or nil when it passes.
    static func failure(_ l: Ledger, _ options: VerifyOptions = VerifyOptions()) -> LedgerError? {
        do {
            _ = try l.verify(options)
            return nil
        } catch let e as LedgerError {
            return e
        } catch {
            return LedgerError(.storage, "\(error)")
        }
    }

    static func seq(of e: LedgerError?) -> UInt64? {
        guard case .number(let n)? = e?.details["seq"] else { return nil }
        return UInt64(n)
    }

    /// SHA-256 of a file's bytes (to prove nothing was written).
    static func fileDigest(_ path: String) throws -> Digest {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Digest.sha256($0) }
    }

    /// Re-chains every event from `from` after a rewrite, as a careful attacker would, and
    /// updates the head record so that verification alone cannot tell.
    static func rechain(_ txn: Transaction, _ events: Database, _ meta: LogIndex, from: UInt64) throws {
        var prev = Digest.zero
        if from > 1 {
            prev = Digest(bytes: Array(try txn.get(events, key: Keys.u64(from - 1))!.prefix(32)))!
        }
        var seq = from
        var last = (from - 1, prev)
        while let value = try txn.get(events, key: Keys.u64(seq)) {
            let bytes = Array(value.dropFirst(32))
            let hash = bytes.withUnsafeBytes { Digest.sha256(prev, $0) }
            try txn.put(events, key: Keys.u64(seq), value: hash.bytes + bytes)
            prev = hash
            last = (seq, hash)
            seq += 1
        }
        try meta.put(txn, key: Array("head".utf8), value: Keys.u64(last.0) + last.1.bytes)
    }
}
