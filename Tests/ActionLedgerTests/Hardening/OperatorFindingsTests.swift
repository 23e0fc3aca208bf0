import Foundation
import Testing
@testable import ActionLedger

/// What a hostile operator found: values the store recorded that its own export could not
/// reproduce, output lost with a success status, and a clock variable judged by its value.
@Suite struct OperatorFindingsTests {
    let fixture: ProcessFixture
    init() throws { fixture = try ProcessFixture("operator") }

    /// A negative zero was stored with its own bits, and printed as `0`: the export no longer
    /// hashed to the chain. Now every JSON zero is one zero, so the store's export verifies,
    /// imports and passes the independent verifier.
    @Test func aNegativeZeroLeavesTheExportVerifiable() throws {
        let t = try TempLedger()
        try t.ledger.create(StoreCreation(testClock: true, demo: false), now: t0)
        let input = try ProposalInput(json: try JSONParser.parse("""
            {"action_id": "z", "org": "quinn-co", "person": "quinn", "specialist": {"name": "S", "agent": "a"}, "surface": "s",
             "kind": "k", "target": {"type": "t", "id": "x"}, "stakes": "low", "confidence": -0.0,
             "preview": {"text": "x", "price": -0.0}, "rationale": ""}
            """))
        #expect(input.proposal.confidence.sign == .plus && input.proposal.preview.price?.sign == .plus)
        try t.ledger.run(.propose(input))
        var policy = try PolicyDocument(json: try JSONParser.parse(#"{"auto_ship": {"confidence_floor": -0.0}}"#))
        policy.version = 1
        try t.ledger.run(.setPolicy(policy, org: "quinn-co"))
        // As an earlier build stored them: the bits of a negative zero (a proposal's confidence
        // and price, an outcome), which the export must print so that they hash to the chain.
        var older = proposal("z2", stakes: .low, confidence: -0.0)
        older.proposal.preview.price = -0.0
        older.proposal.contentHash = EventCodec.contentHash(of: older.proposal.preview)
        try t.ledger.run(.propose(older))  // auto-ships: the policy's floor is 0
        try t.ledger.run(.recordOutcome(actionId: "z2", succeeded: true, outcome: ["x": .number(-0.0)]))
        let (path, python) = try t.exportAndVerifyIndependently()
        #expect(python.status == 0, "\(python.stdout)\(python.stderr)")
        let head = try t.ledger.read { try $0.head() }
        #expect(try ExportVerifier.verify(path: path).head == head)
        let fresh = try TempLedger()
        #expect(try fresh.ledger.importJSONL(path: path) == head)
    }

    /// A token's expiry past the engine's last time (year 2100) is refused: one past year
    /// 9999 has no ISO-8601 form and the store's own export was refused.
    @Test func aTokenCannotOutliveTheEnginesTimes() throws {
        let t = try TempLedger()
        try t.ledger.create(StoreCreation(testClock: true, demo: false), now: t0)
        let head = try t.ledger.read { try $0.head() }
        for days: Int64 in [2_913_000, 99_999_999, 30_000] {
            let e = try requireLedgerError(.invalidInput, "\(days) days") {
                try t.ledger.issueToken(org: "quinn-co", scope: .auditor, subject: nil,
                                        expiresAt: t0.adding(milliseconds: days * Timestamp.day), now: t0)
            }
            #expect(e.details["field"] == "expires_at")
        }
        #expect(try t.ledger.read { try $0.head() } == head)
        _ = try t.ledger.issueToken(org: "quinn-co", scope: .auditor, subject: nil, expiresAt: t0.adding(milliseconds: 365 * Timestamp.day), now: t0)
    }

    /// An outcome's `device` given as null is no device given: the deciding device fills it.
    @Test func anOutcomeWithANullDeviceNamesTheDecidingDevice() throws {
        let t = try TempLedger()
        try t.ledger.run(.linkDevice(device: "phone", person: "quinn", org: "quinn-co", label: "Phone", platform: .ios))
        try t.ledger.run(.propose(proposal("a1", stakes: .low)))
        try t.ledger.run(.tap(.approve, actionId: "a1", device: "phone"))
        let done = try t.ledger.run(.recordOutcome(actionId: "a1", succeeded: true, outcome: ["device": .null, "post": "p1"]))
        guard case .executed(let o) = done.events[0].event.payload else { Issue.record("not an outcome"); return }
        #expect(try JSONParser.parse(o.outcome)["device"] == "phone", "\(o.outcome)")
    }

    /// Output that cannot be written is a failure, not a success with the output lost; a
    /// closed stdout is refused before any work, so no file opened after it can take its
    /// number and receive what is printed.
    @Test func outputThatCannotBeWrittenFails() throws {
        let db = fixture.path("s.lmdb")
        #expect(try LedgerProcess.run(["init", "--test-clock", "--db", db], environment: ["LEDGER_NOW": "2026-11-24T10:00:00Z"]).status == 0)
        let before = FileManager.default.contents(atPath: db)
        func shell(_ command: String) throws -> LedgerProcess.Output {
            try Child("/bin/sh", ["-c", command], environment: ["LEDGER_NOW": "2026-11-24T10:00:00Z", "LEDGER": LedgerProcess.binary,
                                                                "DB": db], label: command).finish(within: 60)
        }
        for args in ["log", "today --person quinn --json", "verify --json"] {
            let full = try shell("\"$LEDGER\" \(args) --db \"$DB\" > /dev/full")
            #expect(full.status == LedgerError.Code.storage.exitStatus && full.stderr.contains("could not write the output"),
                    "\(args): \(full.status) \(full.stderr)")
            // With stderr full too, the message is lost but the exit status stands (no crash).
            let both = try shell("\"$LEDGER\" \(args) --db \"$DB\" > /dev/full 2>/dev/full")
            #expect(both.status == LedgerError.Code.storage.exitStatus, "\(args): \(both.status)")
            let closed = try shell("\"$LEDGER\" \(args) --db \"$DB\" >&-")
            #expect(closed.status == LedgerError.Code.invalidInput.exitStatus && closed.stderr.contains("stdout is closed"),
                    "\(args): \(closed.status) \(closed.stderr)")
        }
        // A follower stops with storage_error instead of dropping every event it cannot write.
        let follow = try shell("timeout 20 \"$LEDGER\" log --follow --db \"$DB\" > /dev/full")
        #expect(follow.status == LedgerError.Code.storage.exitStatus, "\(follow.status) \(follow.stderr)")
        // stdout or stderr that is the store (or its lock) is refused: the output would overwrite it.
        for redirect in ["1<>\"$DB\"", "2<>\"$DB\"", "1<>\"$DB-lock\"", "1<>\"$DB\" 2>&1", "2<>\"$DB\" 1>&2", "1<>\"$DB\" 2<>\"$DB-lock\""] {
            // Every way a command opens the store: through the global options, or its own (verify, export, backup).
            // And what ArgumentParser prints before any command runs: help, a usage error.
            for command in ["review a2 --device tab --json", "verify", "export", "backup \"$DB.copy\"", "verify --checkpoint none.json",
                            "log --help", "today --no-such-option", "devices --help"] {
                let onto = try shell("\"$LEDGER\" \(command) --db \"$DB\" \(redirect)")
                #expect(onto.status == LedgerError.Code.invalidInput.exitStatus, "\(command) \(redirect): \(onto.status) \(onto.stderr)")
            }
        }
        #expect(FileManager.default.contents(atPath: db) == before)
        let lock = FileManager.default.contents(atPath: db + "-lock")
        for redirect in ["2>>\"$DB-lock\"", ">>\"$DB\""] {
            let usage = try shell("\"$LEDGER\" log --no-such-option --db=\"$DB\" \(redirect)")
            #expect(usage.status == LedgerError.Code.invalidInput.exitStatus, "\(redirect): \(usage.status) \(usage.stderr)")
        }
        #expect(FileManager.default.contents(atPath: db) == before && FileManager.default.contents(atPath: db + "-lock") == lock)
        // A write with stdout closed is refused before it opens the store.
        let approve = try shell("\"$LEDGER\" devices link ph --person quinn --org q --label P --platform ios --db \"$DB\" >&- 2>/dev/null")
        #expect(approve.status == LedgerError.Code.invalidInput.exitStatus)
        #expect(FileManager.default.contents(atPath: db) == before)
    }

    /// `LEDGER_NOW` set, even empty, is refused by a store not created for testing with
    /// `test_clock_only`, whatever its value.
    @Test func anEmptyClockVariableIsStillRefusedByAProductionStore() throws {
        let db = fixture.path("p.lmdb")
        #expect(try LedgerProcess.run(["init", "--db", db]).status == 0)
        for value in ["", "not a time", "2026-11-24T10:00:00Z"] {
            let out = try LedgerProcess.run(["approve", "a1", "--device", "d", "--db", db], environment: ["LEDGER_NOW": value])
            #expect(out.status == LedgerError.Code.testClockOnly.exitStatus, "\(value.debugDescription): \(out.stderr)")
            let made = try LedgerProcess.run(["init", "--db", fixture.path("p-\(value.count).lmdb")], environment: ["LEDGER_NOW": value])
            #expect(made.status == LedgerError.Code.testClockOnly.exitStatus, "\(value.debugDescription): \(made.stderr)")
        }
    }

    /// An offset can carry a time past year 9999 (or before year 1) in UTC: no ISO-8601 form,
    /// so a hold or a proposal's time stored that way made the store's export unreadable.
    @Test func aTimeWithoutAnISOFormIsRefused() throws {
        for text in ["9999-12-31T23:59:59-23:59", "9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+23:59", "0000-01-01T00:00:00Z"] {
            #expect(Timestamp(iso8601: text) == nil, "\(text)")
        }
        for text in ["9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00Z", "9999-12-31T12:00:00+12:00"] {
            let t = try #require(Timestamp(iso8601: text), "\(text)")
            #expect(Timestamp(iso8601: t.iso8601) == t, "\(text) prints as \(t.iso8601)")
        }
    }

    /// The engine reads a digest in either case; so does the independent verifier (it crashed),
    /// and a line it cannot read is a refusal naming it, never a traceback.
    @Test func theIndependentVerifierReadsWhatTheEngineReads() throws {
        let t = try SignedExportTests.signedStore()
        let (path, clean) = try t.exportAndVerifyIndependently()
        #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let upper = try NSRegularExpression(pattern: #""(key_fingerprint|content_hash|fingerprint)":"([0-9a-f]{64})""#)
        var shouted = text
        for m in upper.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
            let r = Range(m.range(at: 2), in: text)!
            shouted.replaceSubrange(r, with: text[r].uppercased())
        }
        #expect(shouted != text)
        try shouted.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try ExportVerifier.verify(path: path).head.seq == 27)
        let (status, out) = try IndependentVerifierTests().python([path])
        #expect(status == 0, "\(out)")
        // A revocation of a device never linked, re-chained: named, not a KeyError.
        var events = try t.ledger.read { r in try (1...(try r.head().seq)).map { try r.event($0)!.event } }
        events.append(Event(seq: 28, at: events[26].at, actor: "operator", commandId: "cmd-ghost", org: "quinn-co", person: "quinn",
                            payload: .deviceRevoked(DeviceRevocation(device: "ghost", reason: ""))))
        let forged = try TempLedger()
        try forged.ledger.append(verbatim: events.map { ($0, nil) })
        let (_, bad) = try forged.exportAndVerifyIndependently()
        #expect(bad.status == 1 && bad.stdout.hasPrefix("seq 28: revocation of ghost, a device never linked"), "\(bad.stdout)\(bad.stderr)")
    }
}
