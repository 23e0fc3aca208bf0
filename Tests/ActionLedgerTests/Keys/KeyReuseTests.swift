import Testing
@testable import ActionLedger

/// One key names one device, once: a key that any device holds or held, revoked or not,
/// is neither linked again nor rotated to (by that device either), so a `key_fingerprint` in the audit names one device and a
/// stolen device's key cannot come back into service under another name.
@Suite struct KeyReuseTests {
    @Test func anotherDevicesKeyIsRefusedForALinkAndARotation() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey(), laptop = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        let head = try t.ledger.read { try $0.head() }
        let link = try requireLedgerError(.invalidInput, "a link with the phone's key") {
            try t.ledger.linkKeyed("ipad", phone, introducer: ("laptop", laptop))
        }
        #expect(link.details["field"] == "public_key")
        try requireLedgerError(.invalidInput, "the laptop rotated to the phone's key") {
            try t.ledger.rotate("laptop", to: phone, signer: ("laptop", laptop))
        }
        // Revoked (stolen, say), its key stays its own.
        try t.ledger.run(.revokeDevice(device: "iphone", reason: "stolen"))
        try requireLedgerError(.invalidInput, "the laptop rotated to the stolen phone's key") {
            try t.ledger.rotate("laptop", to: phone, signer: ("laptop", laptop))
        }
        #expect(try t.ledger.read { try $0.head() }.seq == head.seq + 1)
        // A key is in force once: the device itself does not return to one it left (a
        // rotation's signature binds the key it replaces, so a key coming back would let the
        // rotation that retired it, signed long ago, be replayed to bring back its successor).
        let next = TestDeviceKey()
        try t.ledger.rotate("laptop", to: next, signer: ("laptop", laptop))
        try requireLedgerError(.invalidInput, "the laptop returned to the key it left") {
            try t.ledger.rotate("laptop", to: laptop, signer: ("laptop", next))
        }
        // A key rotated away (as after a compromise) stays the laptop's: no other device takes it.
        try requireLedgerError(.invalidInput, "a link with the laptop's rotated-away key") {
            try t.ledger.linkKeyed("ipad", laptop, introducer: ("laptop", next))
        }
        #expect(try t.ledger.replayDecisions().mismatch == nil)
    }

    /// The rule is the engine's when a link or rotation is made: a store an earlier build
    /// wrote may hold a key on two devices, and stays verifiable and replayable (events.md,
    /// Versioning).
    @Test func aReusedKeyAnEarlierBuildRecordedStillReplays() throws {
        let t = try keyedStore()
        let phone = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        try t.ledger.linkKeyed("laptop", TestDeviceKey(), platform: .cli, introducer: ("iphone", phone))
        var events = try t.ledger.read { r in try (1...(try r.head().seq)).map { try r.event($0)!.event } }
        // The laptop's link re-signed by the phone, over the phone's own key.
        var forged = events[events.count - 1]
        guard case .deviceLinked(var d) = forged.payload else { Issue.record("not a link"); return }
        var key = try phone.key()
        let storeId = try t.ledger.read { try $0.storeId() }!
        key.trust = .introducedBy(device: "iphone", signature: try phone.sign(Statement.link(
            storeId: storeId, org: forged.org, person: forged.person, device: d.device, platform: d.platform, key: key, introducedBy: "iphone")))
        d.key = key
        forged.payload = .deviceLinked(d)
        events[events.count - 1] = forged
        let f = try TempLedger()
        try f.ledger.append(verbatim: events.map { ($0, nil) })
        #expect(try f.ledger.replayDecisions().mismatch == nil)
        _ = try f.ledger.verifyProofs()
        // ... while the engine refuses to make such a link now.
        try requireLedgerError(.invalidInput) { try f.ledger.linkKeyed("ipad", phone, introducer: ("iphone", phone)) }
    }
}
