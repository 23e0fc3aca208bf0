import Foundation
import Testing
@testable import ActionLedger

/// Short or damaged stored records (written with raw LMDB, bypassing the engine) give
/// `corrupt_event`, never a trap or a silent fallback.
@Suite struct CorruptRecordTests {
    typealias F = IntegrityFixtures

    func populated() throws -> TempLedger {
        let t = try TempLedger()
        try F.populate(t.ledger)
        return t
    }

    func put(_ l: Ledger, _ index: KeyPath<LogDatabases, LogIndex>, _ key: [UInt8], _ value: [UInt8]) throws {
        try l.environment.write { txn in try LogDatabases.open(txn)![keyPath: index].put(txn, key: key, value: value) }
    }

    func expectCorrupt(_ what: String, _ body: () throws -> Void) {
        #expect("\(what)", performing: body, throws: { e in
            (e as? LedgerError)?.code == .corruptEvent
        })
    }

    @Test func aShortHeadRecordIsCorruptNotATrap() throws {
        let t = try populated()
        let l = t.ledger!
        for length in [0, 8, 39, 41] {
            try put(l, \.head, MetaKey.head, Array(repeating: 7, count: length))
            expectCorrupt("head of \(length) bytes") { _ = try l.read { try $0.head() } }
            expectCorrupt("a command over a head of \(length) bytes") {
                _ = try l.run(.tap(.review, actionId: "a3", device: "iphone"), commandId: "h-\(length)")
            }
        }
    }

    @Test func aShortCommandRecordIsCorruptOnReplay() throws {
        let t = try populated()
        let l = t.ledger!
        try l.run(.propose(proposal("c1")), commandId: "cmd-1")
        for length in [0, 5, 11, 13] {
            try put(l, \.commands, Array("cmd-1".utf8), Array(repeating: 0, count: length))
            expectCorrupt("command record of \(length) bytes") { _ = try l.read { try $0.command("cmd-1") } }
            expectCorrupt("replay over \(length) bytes") { _ = try l.run(.propose(proposal("c1")), commandId: "cmd-1") }
        }
    }

    @Test func aDamagedPolicyPointerIsCorruptNotTheBuiltInPolicy() throws {
        let t = try populated()
        let l = t.ledger!
        for value in [[1, 2, 3], Keys.u64(7), Keys.u64(999)] {
            try put(l, \.meta, MetaKey.policy, value)
            expectCorrupt("policy pointer \(value)") { _ = try l.read { try $0.policy() } }
        }
    }

    @Test func shortAutoShipCountsAndDeviceKeysAreCorrupt() throws {
        let t = try populated()
        let l = t.ledger!
        try put(l, \.autoShipDays, Keys.composite("quinn", UInt64(t0.utcDay)), [1, 2, 3])
        expectCorrupt("auto-ship count of 3 bytes") { _ = try l.read { try $0.autoShipped(person: "quinn", day: t0.utcDay) } }
        try put(l, \.deviceSeqs, [0x41], [])
        expectCorrupt("device key of 1 byte") { _ = try l.read { try $0.allDevices() } }
        // A key of this action with a 9-byte seq would end the scan early and hide what follows.
        try put(l, \.actionSeqs, Keys.prefix("a1") + [0] + Keys.u64(1), [])
        expectCorrupt("action key with a 9-byte seq") { _ = try l.read { try $0.actionState("a1") } }
    }

    @Test func anEventStoredUnderAnotherSeqOrTruncatedIsCorrupt() throws {
        let t = try populated()
        let l = t.ledger!
        let five = try F.raw(l, 5)
        try F.tamper(l) { txn, events, _ in try txn.put(events, key: Keys.u64(6), value: five) }
        expectCorrupt("event 5 under key 6") { _ = try l.read { try $0.event(6) } }
        for length in [0, 32, 33, 40, five.count - 1] {
            try F.tamper(l) { txn, events, _ in try txn.put(events, key: Keys.u64(6), value: Array(five.prefix(length))) }
            expectCorrupt("event of \(length) bytes") { _ = try l.read { try $0.event(6) } }
        }
    }
}
