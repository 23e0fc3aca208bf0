import Testing
@testable import ActionLedger

/// A person who revokes one of her devices from another (the server's signed challenge)
/// is recorded with the device she acted from, as every other step she takes is; the
/// engine and decision replay accept only her own live device there.
@Suite struct RevokedFromDeviceTests {
    @Test func aRevocationMadeFromHerDeviceRecordsThatDevice() throws {
        let t = try DecisionReplayTests.store(), l = t.ledger!
        let later = t0.adding(milliseconds: 10_000)
        // Her Mac holds a user-verified key: what the server's revocation challenge proves.
        let macKey = TestDeviceKey()
        try l.linkKeyed("mac", macKey, protection: .userVerification, platform: .web, now: later)
        // Signed by the Mac's key, as the server's challenge hands it over.
        func revoke(_ device: String, by: String?, actor: String = "quinn", id: String? = nil) throws -> CommandResult {
            let proof = try by.map { try l.revocationProof(device, by: $0, macKey) }
            return try l.execute(CommandRequest(.revokeDevice(device: device, reason: "lost", by: by, proof: proof),
                                                commandId: id, now: later, actor: actor))
        }
        let head = try l.read { try $0.head().seq }
        expectLedgerError(.deviceNotOwned, "another person's device") { try revoke("iphone", by: "mia-phone") }
        expectLedgerError(.deviceNotOwned, "another actor") { try revoke("iphone", by: "mac", actor: "mia") }
        expectLedgerError(.userVerificationRequired, "a device with no user-verified key") { try revoke("iphone", by: "laptop") }
        expectLedgerError(.unknownDevice, "never linked") { try revoke("iphone", by: "tablet") }
        #expect(try l.read { try $0.head().seq } == head)

        let done = try revoke("iphone", by: "mac", id: "cmd-revoke")
        #expect(done.events.count == 1 && done.events[0].event.device == "mac" && done.events[0].event.actor == "quinn")
        // The same request again is answered; the same id from another device is not.
        #expect(try revoke("iphone", by: "mac", id: "cmd-revoke").replayed)
        expectLedgerError(.deviceRevoked, "the id's command judged anew") { try revoke("iphone", by: "iphone", id: "cmd-revoke") }
        // A revoked device revokes nothing.
        try l.link("tablet")
        expectLedgerError(.deviceRevoked, "made from a revoked device") { try revoke("tablet", by: "iphone") }
        // What the engine wrote passes every check: replay, the deep walk (indexes, proofs)
        // and the projections against a refold.
        #expect(try l.replayDecisions().mismatch == nil)
        #expect(IntegrityFixtures.failure(l, VerifyOptions(deep: true)) == nil)
        try l.verifyProjections()
        // Listed under the device revoked and the one it was revoked from, which the row names.
        for listing in ["mac", "iphone"] {
            let rows = try l.query { try $0.audit(.device(listing), limit: 100) }.entries
            #expect(rows.contains { $0.type == .deviceRevoked && $0.device == "iphone" && $0.detail == "from mac: lost" },
                    "\(listing): \(rows.map(\.type))")
        }
    }

    @Test func replayRefusesADeviceEventNamingADeviceTheEngineWouldNot() throws {
        let forgeries: [(String, Event)] = [
            ("another person's device", Event(seq: 10, at: t0.adding(milliseconds: 9000), actor: "quinn", device: "mia-phone",
                                              commandId: "cmd-x", org: "quinn-co", person: "quinn",
                                              payload: .deviceRevoked(DeviceRevocation(device: "iphone", reason: "")))),
            ("a device with no user-verified key", Event(seq: 10, at: t0.adding(milliseconds: 9000), actor: "quinn", device: "laptop",
                                                         commandId: "cmd-x", org: "quinn-co", person: "quinn",
                                                         payload: .deviceRevoked(DeviceRevocation(device: "iphone", reason: "")))),
            ("a device never linked", Event(seq: 10, at: t0.adding(milliseconds: 9000), actor: "quinn", device: "ghost",
                                            commandId: "cmd-x", org: "quinn-co", person: "quinn",
                                            payload: .deviceRevoked(DeviceRevocation(device: "iphone", reason: "")))),
            ("a link made from a device", Event(seq: 10, at: t0.adding(milliseconds: 9000), actor: "operator", device: "laptop",
                                                commandId: "cmd-x", org: "quinn-co", person: "quinn",
                                                payload: .deviceLinked(DeviceLink(device: "tablet", label: "t", platform: .ios)))),
        ]
        for (what, forged) in forgeries {
            let t = try DecisionReplayTests.store()
            try t.ledger.append(verbatim: [(forged, nil)])
            let m = try t.ledger.replayDecisions().mismatch
            #expect(m?.seq == 10 && (m?.rule == "device.revoke" || m?.rule == "device.event"), "\(what): \(String(describing: m))")
        }
    }
}
