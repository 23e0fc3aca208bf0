import Foundation
import Testing
@testable import ActionLedger

extension Ledger {
    /// Links `device` as `person`'s first keyed device (trust on first use) with her
    /// recovery key registered in the same command.
    @discardableResult
    func linkFirst(_ device: String, _ key: TestDeviceKey, recovery: TestDeviceKey, person: String = "quinn") throws -> CommandResult {
        try run(.linkKeyedDevice(device: device, person: person, org: "quinn-co", label: "\(device) label", platform: .ios,
                                 key: try key.key(), recoveryKey: try RecoveryKey(spki: recovery.spki)))
    }

    /// Links `device` for `person` vouched for by `signer`'s signature over the recovery link
    /// statement naming `named` (default: the signer's own fingerprint).
    @discardableResult
    func recover(_ device: String, _ key: TestDeviceKey, signer: TestDeviceKey, named: TestDeviceKey? = nil,
                 person: String = "quinn") throws -> CommandResult {
        var k = try key.key()
        let fingerprint = try RecoveryKey(spki: (named ?? signer).spki).fingerprint
        let storeId = try read { try $0.storeId() }!
        let statement = Statement.recoveryLink(storeId: storeId, org: "quinn-co", person: person, device: device, platform: .ios,
                                               key: k, recoveryKey: fingerprint)
        k.trust = .recovery(key: fingerprint, signature: try signer.sign(statement))
        return try run(.linkKeyedDevice(device: device, person: person, org: "quinn-co", label: "\(device) label", platform: .ios, key: k))
    }

    /// Puts `newKey` in force as `person`'s recovery key, signed by a device of hers or, with
    /// `device` nil, by `signer` as her recovery key in force.
    @discardableResult
    func setRecovery(_ newKey: TestDeviceKey, signer: TestDeviceKey, device: String?, person: String = "quinn") throws -> CommandResult {
        let key = try RecoveryKey(spki: newKey.spki)
        let statement = try recoveryKeyStatement(person: person, key: key, signedBy: device.map { "device:" + $0 } ?? "recovery_key")
        let signature = try signer.sign(statement)
        let trust: RecoveryTrust = device.map { .device($0, signature: signature) } ?? .recoveryKey(signature: signature)
        return try run(.setRecoveryKey(person: person, key: key, trust: trust))
    }
}

/// Recovery keys (Specs/statements.md §1.2, §3.3): a person who lost every keyed device gets
/// a keyed device again only through the recovery key she registered; the operator never can.
@Suite struct RecoveryKeyTests {
    static func message(_ e: LedgerError) -> String { e.message }

    @Test func withoutARecoveryKeyAPersonStaysLockedOutOfKeyedDevices() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), laptop = TestDeviceKey(), thief = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "lost"))
        let e = try requireLedgerError(.introductionRequired) { try t.ledger.linkKeyed("laptop", laptop) }
        #expect(e.message.contains("registered no recovery key") && e.message.contains("unkeyed devices can still be linked"), "\(e.message)")
        let recovered = try requireLedgerError(.introductionRequired) { try t.ledger.recover("laptop", laptop, signer: thief) }
        #expect(recovered.message.contains("has no recovery key"))
        try t.ledger.run(.linkDevice(device: "tablet", person: "quinn", org: "quinn-co", label: "Tablet", platform: .web))
        try TapRefusedTests.verifiesEverywhere(t)
    }

    @Test func theRecoveryKeyLinksADeviceOnlyOnceEveryKeyedDeviceIsRevoked() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), laptop = TestDeviceKey(), recovery = TestDeviceKey(), fresh = TestDeviceKey()
        let first = try t.ledger.linkFirst("iphone", phone, recovery: recovery)
        #expect(first.events.map(\.event.type) == [.deviceLinked, .personRecoveryKeySet])
        try t.ledger.linkKeyed("laptop", laptop, introducer: ("iphone", phone))
        let early = try requireLedgerError(.introductionRequired) { try t.ledger.recover("new-phone", fresh, signer: recovery) }
        #expect(early.message.contains("still has unrevoked keyed devices (iphone, laptop)"), "\(early.message)")
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "lost"))
        try t.ledger.run(.revokeDevice(device: "laptop", reason: "stolen"))
        let firstUse = try requireLedgerError(.introductionRequired) { try t.ledger.linkKeyed("new-phone", fresh) }
        #expect(firstUse.message.contains("--recovered-by-key"), "\(firstUse.message)")
        // Another key, naming itself or naming hers, does not stand in for her recovery key.
        let thief = TestDeviceKey()
        try requireLedgerError(.introductionRequired) { try t.ledger.recover("new-phone", fresh, signer: thief) }
        let forged = try requireLedgerError(.badProof) { try t.ledger.recover("new-phone", fresh, signer: thief, named: recovery) }
        #expect(forged.details["problem"] == "signature")
        let r = try t.ledger.recover("new-phone", fresh, signer: recovery)
        guard case .deviceLinked(let link) = r.events[0].event.payload else { Issue.record("no link"); return }
        #expect(link.key?.isRecovered == true && r.events[0].event.schemaVersion == 3)
        // The recovered device signs, and introduces the next one.
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "new-phone"), fresh)
        try t.ledger.linkKeyed("new-laptop", TestDeviceKey(), platform: .cli, introducer: ("new-phone", fresh))
        #expect(try t.ledger.read { try $0.event(r.events[0].seq)?.event.json().serialized().contains(#""trust":"recovery""#) } == true)
        try TapRefusedTests.verifiesEverywhere(t)
    }

    @Test func theOperatorCannotGiveHerARecoveryKey() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), laptop = TestDeviceKey(), other = TestDeviceKey(), mine = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        let operatorKey = try RecoveryKey(spki: mine.spki)
        // Trust on first use only with her first keyed device, in the same command.
        let e = try requireLedgerError(.introductionRequired) {
            try t.ledger.run(.setRecoveryKey(person: "quinn", key: operatorKey, trust: .firstUse))
        }
        #expect(e.message.contains("only with quinn's first keyed device"))
        var introduced = try laptop.key()
        introduced.trust = .introducedBy(device: "iphone", signature: try phone.sign(Statement.link(
            storeId: try t.ledger.read { try $0.storeId() }!, org: "quinn-co", person: "quinn", device: "laptop", platform: .ios,
            key: introduced, introducedBy: "iphone")))
        try requireLedgerError(.introductionRequired) {
            try t.ledger.run(.linkKeyedDevice(device: "laptop", person: "quinn", org: "quinn-co", label: "Laptop", platform: .ios,
                                              key: introduced, recoveryKey: operatorKey))
        }
        #expect(try t.ledger.read { try $0.deviceState("laptop") } == nil, "nothing of the refused command was written")
        // Signed by no device of hers, by a wrong key, or by no recovery key in force.
        try t.ledger.run(.linkKeyedDevice(device: "rhea-phone", person: "rhea", org: "quinn-co", label: "Rhea", platform: .ios,
                                          key: try other.key()))
        try requireLedgerError(.introductionRequired) { try t.ledger.setRecovery(mine, signer: other, device: "rhea-phone") }
        let bad = try requireLedgerError(.badProof) { try t.ledger.setRecovery(mine, signer: other, device: "iphone") }
        #expect(bad.details["problem"] == "signature")
        try requireLedgerError(.introductionRequired) { try t.ledger.setRecovery(mine, signer: mine, device: nil) }
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "lost"))
        try requireLedgerError(.introductionRequired) { try t.ledger.setRecovery(mine, signer: phone, device: "iphone") }
        #expect(try t.ledger.recoveryKey(person: "quinn") == nil)
        try TapRefusedTests.verifiesEverywhere(t)
    }

    /// The operator's word is refused as such (`introduction_required`), whatever recovery
    /// key is in force, and for a person with no device at all.
    @Test func theOperatorsWordIsRefusedAsSuchEvenWithARecoveryKeyInForce() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), recovery = TestDeviceKey(), laptop = TestDeviceKey(), mine = TestDeviceKey()
        try t.ledger.linkFirst("iphone", phone, recovery: recovery)
        var introduced = try laptop.key()
        introduced.trust = .introducedBy(device: "iphone", signature: try phone.sign(Statement.link(
            storeId: try t.ledger.read { try $0.storeId() }!, org: "quinn-co", person: "quinn", device: "laptop", platform: .ios,
            key: introduced, introducedBy: "iphone")))
        let e = try requireLedgerError(.introductionRequired) {
            try t.ledger.run(.linkKeyedDevice(device: "laptop", person: "quinn", org: "quinn-co", label: "Laptop", platform: .ios,
                                              key: introduced, recoveryKey: try RecoveryKey(spki: mine.spki)))
        }
        #expect(e.message.contains("only with quinn's first keyed device"))
        #expect(try t.ledger.read { try $0.deviceState("laptop") } == nil)
        let nobody = try requireLedgerError(.introductionRequired) { try t.ledger.setRecovery(mine, signer: mine, device: nil, person: "nobody") }
        #expect(nobody.details["person"] == "nobody")
    }

    @Test func replacingTheRecoveryKeyNeedsHerDeviceOrTheKeyInForce() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), first = TestDeviceKey(), second = TestDeviceKey(), third = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.setRecovery(first, signer: phone, device: "iphone")
        #expect(try t.ledger.recoveryKey(person: "quinn")?.set.previousFingerprint == nil)
        // The statement binds the key it replaces: a registration signed for the first key's
        // place cannot be replayed once the second is in force.
        let key2 = try RecoveryKey(spki: second.spki)
        let statement = try t.ledger.recoveryKeyStatement(person: "quinn", key: key2, signedBy: "recovery_key")
        let replayable = RecoveryTrust.recoveryKey(signature: try first.sign(statement))
        try t.ledger.run(.setRecoveryKey(person: "quinn", key: key2, trust: replayable))
        #expect(try t.ledger.recoveryKey(person: "quinn")?.set.previousFingerprint == (try RecoveryKey(spki: first.spki)).fingerprint)
        try requireLedgerError(.invalidInput) { try t.ledger.setRecovery(second, signer: second, device: nil) }
        try requireLedgerError(.badProof) { try t.ledger.setRecovery(third, signer: first, device: nil) }
        try t.ledger.setRecovery(third, signer: second, device: nil)
        let replayed = try requireLedgerError(.badProof) { try t.ledger.run(.setRecoveryKey(person: "quinn", key: key2, trust: replayable)) }
        #expect(replayed.details["problem"] == "signature")
        // Only the key in force recovers.
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "lost"))
        try requireLedgerError(.introductionRequired) { try t.ledger.recover("new-phone", TestDeviceKey(), signer: second) }
        try t.ledger.recover("new-phone", TestDeviceKey(), signer: third)
        // A key she had before never comes back (recovery.once): the registration that replaced
        // it would otherwise be valid again, for anyone who kept its signature.
        let back = try requireLedgerError(.invalidInput) { try t.ledger.setRecovery(first, signer: third, device: nil) }
        #expect(back.details["field"] == "public_key")
        try TapRefusedTests.verifiesEverywhere(t)
    }
}

extension RecoveryKeyTests {
    /// Appends `forged` after `t`'s log in a fresh store, as anyone re-chaining an export can.
    static func forgedStore(_ t: TempLedger, _ forged: [Payload], oneCommand: Bool = false) throws -> (TempLedger, first: UInt64) {
        var events = try t.ledger.read { r in try (1...(try r.head().seq)).map { try r.event($0)!.event } }
        let first = UInt64(events.count + 1)
        for (i, payload) in forged.enumerated() {
            events.append(Event(seq: first + UInt64(i), at: events.last!.at, actor: "operator",
                                commandId: oneCommand ? "cmd-forged" : "cmd-forged-\(i)",
                                org: "quinn-co", person: "quinn", payload: payload))
        }
        let f = try TempLedger()
        try f.ledger.append(verbatim: events.map { ($0, nil) })
        return (f, first)
    }

    /// The recovered link `signer` vouches for, as a payload.
    static func recoveredLink(_ t: TempLedger, _ device: String, _ key: TestDeviceKey, signer: TestDeviceKey) throws -> Payload {
        var k = try key.key()
        let fingerprint = try RecoveryKey(spki: signer.spki).fingerprint
        let statement = Statement.recoveryLink(storeId: try t.ledger.read { try $0.storeId() }!, org: "quinn-co", person: "quinn",
                                               device: device, platform: .ios, key: k, recoveryKey: fingerprint)
        k.trust = .recovery(key: fingerprint, signature: try signer.sign(statement))
        return .deviceLinked(DeviceLink(device: device, label: "Forged", platform: .ios, key: k))
    }

    static func expectRefusedEverywhere(_ f: TempLedger, seq: UInt64, rule: String) throws {
        let e = try requireLedgerError(.integrityFailure) { try f.ledger.verifyProofs() }
        #expect(e.details["seq"] == .number(Double(seq)) && e.details["proof_code"] == "introduction_required", "\(e)")
        let mismatch = try f.ledger.replayDecisions().mismatch
        #expect(mismatch?.seq == seq && mismatch?.rule == rule && mismatch?.code == "introduction_required", "\(String(describing: mismatch))")
        let (path, py) = try f.exportAndVerifyIndependently()
        #expect(py.status == 1 && py.stdout.hasPrefix("seq \(seq): "), "\(py.stdout)\(py.stderr)")
        try requireLedgerError(.integrityFailure) { try ExportVerifier.verify(path: path) }
    }

    /// An operator who gives himself her recovery key on his own word, then recovers a
    /// device with it, is refused by every offline checker at the registration.
    @Test func anOperatorsOwnRecoveryKeyIsCaughtOffline() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), mine = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "lost"))
        let set = Payload.recoveryKeySet(RecoveryKeySet(key: try RecoveryKey(spki: mine.spki), previousFingerprint: nil, trust: .firstUse))
        let (f, first) = try Self.forgedStore(t, [set, try Self.recoveredLink(t, "evil", TestDeviceKey(), signer: mine)])
        try Self.expectRefusedEverywhere(f, seq: first, rule: "recovery.key")
    }

    /// A signed registration riding in a link's command: the engine never writes one.
    @Test func aSignedRecoveryKeyInALinksCommandIsCaughtOffline() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), laptop = TestDeviceKey(), recovery = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone)
        let storeId = try t.ledger.read { try $0.storeId() }!
        var k = try laptop.key()
        k.trust = .introducedBy(device: "iphone", signature: try phone.sign(Statement.link(
            storeId: storeId, org: "quinn-co", person: "quinn", device: "laptop", platform: .ios, key: k, introducedBy: "iphone")))
        let key = try RecoveryKey(spki: recovery.spki)
        let statement = Statement.recoveryKey(storeId: storeId, org: "quinn-co", person: "quinn", key: key.fingerprint, previous: nil,
                                              signedBy: "device:iphone")
        let set = Payload.recoveryKeySet(RecoveryKeySet(key: key, previousFingerprint: nil,
                                                        trust: .device("iphone", signature: try phone.sign(statement))))
        let link = Payload.deviceLinked(DeviceLink(device: "laptop", label: "Laptop", platform: .ios, key: k))
        let (f, first) = try Self.forgedStore(t, [link, set], oneCommand: true)
        let mismatch = try f.ledger.replayDecisions().mismatch
        #expect(mismatch?.seq == first + 1 && mismatch?.rule == "recovery.key", "\(String(describing: mismatch))")
        try requireLedgerError(.integrityFailure) { try f.ledger.verifyProofs() }
        // Each in a command of its own, both are what the engine writes.
        let (g, _) = try Self.forgedStore(t, [link, set])
        #expect(try g.ledger.replayDecisions().mismatch == nil)
        _ = try g.ledger.verifyProofs()
    }

    /// The engine reads her recovery key through `meta`'s `recovery/PERSON`: `verify --deep`
    /// rederives it, and names one altered or added.
    @Test func theRecoveryPointerIsAnIndexRecord() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), recovery = TestDeviceKey()
        try t.ledger.linkFirst("iphone", phone, recovery: recovery)
        try t.ledger.setRecovery(TestDeviceKey(), signer: recovery, device: nil)
        func meta(_ body: (LogIndex, Transaction) throws -> Void) throws {
            try t.ledger.environment.write { txn in try body(LogDatabases.open(txn)!.meta, txn) }
        }
        let first = try #require(try t.ledger.read { try $0.head().seq }) - 1
        try meta { m, txn in try m.put(txn, key: MetaKey.recovery("quinn"), value: Keys.u64(first)) }
        let altered = try requireLedgerError(.integrityFailure) { try t.ledger.verifyProofs() }
        #expect(altered.details["problem"] == "index_mismatch" && altered.details["key"] == "recovery/quinn", "\(altered)")
        try meta { m, txn in
            try m.put(txn, key: MetaKey.recovery("quinn"), value: Keys.u64(first + 1))
            try m.put(txn, key: MetaKey.recovery("rhea"), value: Keys.u64(first + 1))
        }
        let added = try requireLedgerError(.integrityFailure) { try t.ledger.verifyProofs() }
        #expect(added.details["key"] == "recovery/rhea", "\(added)")
        try meta { m, txn in _ = try m.delete(txn, key: MetaKey.recovery("rhea")) }
        _ = try t.ledger.verifyProofs()
    }

    /// Her own recovery key, used while a keyed device of hers is unrevoked.
    @Test func aRecoveryBesideAWorkingDeviceIsCaughtOffline() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), recovery = TestDeviceKey()
        try t.ledger.linkFirst("iphone", phone, recovery: recovery)
        let (f, first) = try Self.forgedStore(t, [try Self.recoveredLink(t, "evil", TestDeviceKey(), signer: recovery)])
        try Self.expectRefusedEverywhere(f, seq: first, rule: "device.link")
    }
}

