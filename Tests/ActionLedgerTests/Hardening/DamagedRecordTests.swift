import Foundation
import Testing
@testable import ActionLedger

/// Stored bytes are never trusted: a damaged record is `corrupt_event`, never a trap that
/// takes down the process (and with it `ledger serve`) on every request that touches it.
@Suite struct DamagedRecordTests {
    /// A `commands` entry whose range would overflow: the command id's next use (over HTTP,
    /// any client's Idempotency-Key) is refused instead of trapping on `first + count`.
    @Test func aDamagedCommandsEntryIsCorruptNotATrap() throws {
        let t = try TempLedger(), l = t.ledger!
        let seq = try l.run(.propose(proposal("a1")), commandId: "cmd-damaged").events[0].seq
        for (first, count) in [(UInt64.max - 15, UInt32(32)), (0, 1), (5, 0), (2, UInt32.max), (2, UInt32.max - 1), (2, 1 << 31)] {
            var value = Keys.u64(first)
            withUnsafeBytes(of: count.bigEndian) { value.append(contentsOf: $0) }
            try l.environment.write { txn in try l.dbs.commands.put(txn, key: "cmd-damaged".utf8, value: value) }
            #expect(code { try l.run(.propose(proposal("a2")), commandId: "cmd-damaged") } == .corruptEvent, "\(first), \(count)")
        }
        // An intact entry still answers the replay.
        try l.environment.write { txn in
            try l.dbs.commands.put(txn, key: "cmd-damaged".utf8, value: LogReader.commandRecord(first: seq, count: 1))
        }
        #expect(try l.run(.propose(proposal("a1")), commandId: "cmd-damaged").replayed)
    }

    /// A head record that names a seq the log does not end at (past it, or absurd): every
    /// write is refused as corrupt before it appends, so a gap is never written after it.
    @Test func aHeadRecordTheLogDoesNotMatchRefusesWrites() throws {
        let t = try TempLedger(), l = t.ledger!
        let seq = try l.run(.propose(proposal("a1"))).events[0].seq
        let intact = try l.read { try $0.head() }
        for claimed in [seq + 10, seq - 1, UInt64.max] {
            try l.environment.write { txn in
                try l.dbs.head.put(txn, key: MetaKey.head, value: Keys.u64(claimed) + intact.hash.bytes)
            }
            #expect(code { try l.run(.propose(proposal("a2"))) } == .corruptEvent, "head \(claimed)")
            // A rebuild, which folds up to the head, refuses it too instead of waiting for ever.
            #expect(code { _ = try l.rebuild() } == .corruptEvent, "rebuild, head \(claimed)")
            #expect(try l.environment.read { txn in try txn.get(l.dbs.events, key: Keys.u64(seq + 1)) } == nil)
        }
        // An event stored under another seq's key is never listed as that seq.
        try l.environment.write { txn in
            try l.dbs.head.put(txn, key: MetaKey.head, value: Keys.u64(intact.seq) + intact.hash.bytes)
            let value = try #require(try txn.get(l.dbs.events, key: Keys.u64(seq)))
            try txn.put(l.dbs.events, key: Keys.u64(seq + 1), value: value)
        }
        #expect(code { try l.read { r in try r.forEach(from: seq) { _ in true } } } == .corruptEvent)
    }

    /// An event whose stored time is out of the engine's range (here Int64.min): every
    /// reader of it — the decoder and the decode-free view — refuses it as corrupt.
    @Test func anEventTimeOutOfRangeIsCorruptNotATrap() throws {
        let t = try TempLedger(), l = t.ledger!
        let seq = try l.run(.propose(proposal("a1"))).events[0].seq
        try l.environment.write { txn in
            var value = try #require(try txn.get(l.dbs.events, key: Keys.u64(seq)))
            // hash (32) ‖ format, type, schema version (3) ‖ seq (8) ‖ at (8)
            for i in 0..<8 { value[43 + i] = i == 0 ? 0x80 : 0 }
            try txn.put(l.dbs.events, key: Keys.u64(seq), value: value)
        }
        #expect(code { _ = try l.read { try $0.event(seq) } } == .corruptEvent)
        #expect(code { try l.read { try $0.forEachView(from: seq) { _, _ in true } } } == .corruptEvent)
        // The view's refusal names the seq it was read at, and so does a rebuild's.
        do {
            try l.read { try $0.forEachView(from: 1) { _, _ in true } }
            Issue.record("a damaged time was read")
        } catch let e as LedgerError {
            #expect(e.details["seq"] == .number(Double(seq)), "\(e.message)")
        }
        do {
            _ = try l.rebuild()
            Issue.record("a damaged time was folded")
        } catch let e as LedgerError {
            #expect(e.code == .corruptEvent && e.details["seq"] == .number(Double(seq)), "\(e.message)")
        }
        // Formatting any time never traps either (a payload time is not range-checked).
        #expect(Timestamp(milliseconds: .min).iso8601.hasSuffix("Z"))
        #expect(Timestamp(milliseconds: .max).iso8601.hasSuffix("Z"))
    }

    /// A count (a device's taps, a card's edits) whose varint holds 2⁶⁴−1: converting it to
    /// Int had trapped every `GET /v1/devices` and `GET /v1/today` (the server died).
    @Test func aHugeCountInAProjectionRecordIsCorruptNotATrap() throws {
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        let device = DeviceRecord(device: "iphone", person: "quinn", org: "quinn-co", label: "iPhone", platform: .ios, linkedAt: t0)
        let item = TodayProjection.Item(person: "quinn", org: "quinn-co", proposedAt: t0, seq: 2, stakes: .medium)
        for encoded in [device.encoded, item.encoded] {
            // Both end with their count: one byte, 0, replaced by the ten of 2⁶⁴−1 (and 2⁵³ + 1).
            #expect(encoded.last == 0)
            for count in [huge, [0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]] {
                let damaged = encoded.dropLast() + count
                let error = damaged.withUnsafeBytes { b in
                    Result { encoded == device.encoded ? try DeviceRecord(decoding: b) as Any : try TodayProjection.Item(decoding: b) as Any }
                }
                guard case .failure(let e as LedgerError) = error else { Issue.record("decoded: \(error)"); continue }
                #expect(e.code == .corruptEvent)
            }
            // 2⁵³ itself still decodes (a count that big is absurd, but converting it is safe).
            let edge = encoded.dropLast() + [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]
            #expect(throws: Never.self) {
                try edge.withUnsafeBytes { b in _ = encoded == device.encoded ? try DeviceRecord(decoding: b) as Any : try TodayProjection.Item(decoding: b) as Any }
            }
        }
    }

    /// A signed step whose recorded claimed time is Int64.min (edited store bytes; no hash
    /// needs fixing for replay to read it): the replay's age check had trapped on the
    /// subtraction, and `GET /v1/audit/replay` took the server down. It is a finding now.
    @Test func aDamagedClaimedTimeIsAFindingNotATrap() throws {
        let t = try keyedStore(), l = t.ledger!
        let key = TestDeviceKey()
        try l.linkKeyed("iphone", key)
        let seq = try l.signed(.tap(.review, actionId: "a1", device: "iphone"), key).events[0].seq
        let fingerprint = try key.key().fingerprint.bytes
        try l.environment.write { txn in
            var value = try #require(try txn.get(l.dbs.events, key: Keys.u64(seq)))
            let at = try #require(value.indices.first { value[$0...].starts(with: fingerprint) })
            // The proof: claimed_at (8) ‖ content hash (32) ‖ key fingerprint.
            for i in 0..<8 { value[at - 40 + i] = i == 0 ? 0x80 : 0 }
            try txn.put(l.dbs.events, key: Keys.u64(seq), value: value)
        }
        let report = try l.replayDecisions()
        #expect(report.mismatch?.seq == seq, "\(String(describing: report.mismatch))")
        // Time arithmetic saturates instead of trapping, and the result can be negated.
        let min = Timestamp(milliseconds: .min), max = Timestamp(milliseconds: .max)
        #expect(t0.milliseconds(since: min) == .max && min.milliseconds(since: t0) == -.max && min.milliseconds(since: Timestamp(milliseconds: 0)) == -.max)
        #expect(min.adding(milliseconds: -1) == min && max.adding(milliseconds: 1) == max)
    }

    /// A policy whose stored version is UInt32's largest (edited bytes): the replay's "+ 1"
    /// and `policy set`'s had trapped (over HTTP, `GET /v1/audit/replay` took the server down).
    @Test func aPolicyVersionThatCannotBeFollowedIsNoTrap() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co"))
        let seq = try l.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co")).events[0].seq
        let last = try l.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co")).events[0].seq
        func damage(_ seq: UInt64) throws {
            try l.environment.write { txn in
                let stored = try #require(try txn.get(l.dbs.events, key: Keys.u64(seq)))
                var event = try stored.withUnsafeBytes { try EventCodec.decode(UnsafeRawBufferPointer(rebasing: $0[32...])) }
                guard case .policySet(var document) = event.payload else { Issue.record("not a policy"); return }
                document.version = .max
                event.payload = .policySet(document)
                try txn.put(l.dbs.events, key: Keys.u64(seq), value: Array(stored.prefix(32)) + EventCodec.encode(event))
            }
        }
        try damage(seq)
        // Judged from the next one (the damaged one applied unjudged): a mismatch, no trap.
        #expect(try l.replayDecisions(from: last).mismatch?.seq == last)
        // The one in force damaged alike: a new policy is refused as corrupt, nothing appended.
        try damage(last)
        expectLedgerError(.corruptEvent) { try l.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co")) }
        #expect(try l.read { try $0.head().seq } == last)
    }

    /// An extra `commands` entry claiming events from seq 2⁶⁴−1: `verify --deep`'s check had
    /// trapped building the range (and blamed LMDB's pages); it is an index mismatch.
    @Test func aCommandsEntryPastEveryEventIsAMismatchInDeepVerify() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.run(.propose(proposal("a1")))
        var value = Keys.u64(.max)
        withUnsafeBytes(of: UInt32(1).bigEndian) { value.append(contentsOf: $0) }
        try l.environment.write { txn in try l.dbs.commands.put(txn, key: "zzz-extra".utf8, value: value) }
        var options = VerifyOptions()
        options.deep = true
        let failure = IntegrityFixtures.failure(l, options)
        #expect(failure?.code == .integrityFailure && failure?.details["problem"] == "index_mismatch", "\(String(describing: failure))")
    }
}
