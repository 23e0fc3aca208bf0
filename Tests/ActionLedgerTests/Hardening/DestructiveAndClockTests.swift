import Foundation
import Testing
@testable import ActionLedger

/// Issue 11 §1 and §4: `demo --fresh` checks everything before it touches a file, and
/// the clock is the engine's: times never go backwards, stay within 2000…2100, and
/// `LEDGER_NOW` is honoured only by a store created for testing.
@Suite struct DestructiveAndClockTests {
    let fixture: ProcessFixture
    init() throws { fixture = try ProcessFixture("hard") }

    func ledger(_ args: [String], db: String, now: String? = "2026-11-22T09:00:00Z") throws -> LedgerProcess.Output {
        var env: [String: String] = [:]
        if let now { env["LEDGER_NOW"] = now }
        return try LedgerProcess.run(args + ["--db", db], environment: env)
    }

    func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test func demoFreshNeverDestroysWhatItCannotRebuild() throws {
        // A text file is not a store: refused, untouched, no lock file made beside it.
        let text = fixture.path("notes.db")
        try "my notes".write(toFile: text, atomically: true, encoding: .utf8)
        #expect(try ledger(["demo", "--fresh"], db: text).status == LedgerError.Code.notEmpty.exitStatus)
        #expect(bytes(text) == Data("my notes".utf8))
        #expect(!FileManager.default.fileExists(atPath: text + "-lock"))
        // Nor is a folder, a FIFO or a link leading nowhere: each is something, kept as it is.
        let folder = fixture.path("folder.lmdb"), fifo = fixture.path("fifo.lmdb"), dangling = fixture.path("dangling.lmdb")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: fixture.path("nowhere"))
        for path in [folder, fifo, dangling] {
            for args in [["demo"], ["demo", "--fresh"]] {
                let out = try ledger(args, db: path)
                #expect(out.status == LedgerError.Code.notEmpty.exitStatus, "\(args) \(path): \(out.status) \(out.stderr)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.path("nowhere")))

        // A production store with events: refused, byte-identical afterwards.
        let prod = fixture.path("prod.lmdb")
        #expect(try ledger(["init"], db: prod, now: nil).status == 0)
        #expect(try ledger(["devices", "link", "ph", "--person", "quinn", "--org", "q", "--label", "P", "--platform", "ios"],
                           db: prod, now: nil).status == 0)
        let before = bytes(prod)
        let refused = try ledger(["demo", "--fresh"], db: prod)
        #expect(refused.status == LedgerError.Code.notEmpty.exitStatus)
        #expect(refused.stderr.contains("not a demo store"))
        #expect(bytes(prod) == before)
    }

    @Test func demoFreshChecksReadOnlyAndTheClockBeforeTouchingTheDemoStore() throws {
        let db = fixture.path("demo.lmdb")
        #expect(try ledger(["demo"], db: db).status == 0)
        let before = bytes(db)
        #expect(before != nil)
        // --read-only: refused first, the file is still there and unchanged.
        #expect(try ledger(["demo", "--fresh", "--read-only"], db: db).status == LedgerError.Code.readOnly.exitStatus)
        #expect(bytes(db) == before)
        // A bad clock: refused before the old demo store is replaced.
        #expect(try ledger(["demo", "--fresh"], db: db, now: "not-a-time").status == LedgerError.Code.invalidInput.exitStatus)
        #expect(try ledger(["demo", "--fresh"], db: db, now: "1999-12-31T23:00:00Z").status == LedgerError.Code.invalidInput.exitStatus)
        #expect(bytes(db) == before)
        // Without --fresh an existing demo store is kept; with it, replaced by a new demo store.
        #expect(try ledger(["demo"], db: db).status == LedgerError.Code.notEmpty.exitStatus)
        #expect(try ledger(["demo", "--fresh"], db: db, now: "2026-11-23T09:00:00Z").status == 0)
        let first = try Ledger(path: db, options: Ledger.Options(readOnly: true))
        #expect(try first.creation() == StoreCreation(testClock: true, demo: true))
        #expect(try first.read { try $0.event(2)?.event.at } == at("2026-11-22T23:00:00Z"))
    }

    @Test func ledgerNowIsRefusedByAProductionStore() throws {
        let prod = fixture.path("prod.lmdb")
        #expect(try ledger(["init"], db: prod, now: nil).status == 0)
        let args = ["devices", "link", "ph", "--person", "quinn", "--org", "q", "--label", "P", "--platform", "ios"]
        let out = try ledger(args, db: prod, now: "2020-01-01T00:00:00Z")
        #expect(out.status == LedgerError.Code.testClockOnly.exitStatus)
        #expect(try ledger(["log"], db: prod, now: nil).stdout.split(separator: "\n").count == 1)
        // `init` without --test-clock refuses LEDGER_NOW too; with it, the store says so.
        #expect(try ledger(["init"], db: fixture.path("x.lmdb")).status == LedgerError.Code.testClockOnly.exitStatus)
        let test = fixture.path("test.lmdb")
        #expect(try ledger(["init", "--test-clock"], db: test).status == 0)
        #expect(try ledger(args, db: test, now: "2026-11-22T09:00:00Z").status == 0)
        let log = try ledger(["log"], db: test, now: nil).stdout
        #expect(log.contains("\"type\":\"store.created\"") && log.contains("\"test_clock\":true"))
    }

    /// A clock that ran ahead dated the last event: the chain is intact, but the store takes
    /// no writes until the clock gets there, and verify says so.
    @Test func verifyWarnsOfALastEventDatedAheadOfTheClock() throws {
        let db = fixture.path("ahead.lmdb")
        #expect(try ledger(["init", "--test-clock"], db: db).status == 0)
        let link = ["devices", "link", "ph", "--person", "quinn", "--org", "q", "--label", "P", "--platform", "ios"]
        #expect(try ledger(link, db: db, now: "2026-11-23T09:00:00Z").status == 0)
        let refused = try ledger(["devices", "revoke", "ph", "--json"], db: db)
        #expect(refused.status == LedgerError.Code.clockBehind.exitStatus && refused.stdout.contains("\"writable_at\":\"2026-11-23T08:59:50.000Z\""))
        let verified = try ledger(["verify", "--json"], db: db)
        #expect(verified.status == 0 && verified.stdout.contains("\"head_dated_ahead_ms\":86400000"), "\(verified.stdout)")
        #expect(verified.stderr.contains("writes are refused (clock_behind) until this clock reaches 2026-11-23T08:59:50.000Z"))
        // Level with the clock: no warning.
        let level = try ledger(["verify", "--json"], db: db, now: "2026-11-23T09:00:00Z")
        #expect(level.status == 0 && !level.stdout.contains("head_dated_ahead_ms") && level.stderr.isEmpty, "\(level.stderr)")
    }

    @Test func timesNeverGoBackwardsAndStayWithin2000And2100() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone", platform: .ios)
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1, expiresAt: at("2026-11-22T10:00:00Z"))),
                  now: at("2026-11-22T09:30:00Z"))
        try l.run(.propose(proposal("a0", stakes: .medium)), now: at("2026-11-22T10:30:00Z"))
        // Backdating the clock to approve before the expiry: refused, nothing written; the
        // refusal says when writes resume (the head's time less the 10 s tolerance).
        let behind = expectLedgerError(.clockBehind) { try l.run(.tap(.approve, actionId: "a1", device: "iphone"), now: at("2026-11-22T09:59:00Z")) }
        #expect(behind?.details["writable_at"] == .string("2026-11-22T10:29:50.000Z"))
        #expect(behind?.details["wait_ms"] == .number(1_850_000))
        // Nor can a proposal arrive already expired (it would auto-ship past its expiry).
        #expect(code {
            try l.run(.propose(proposal("a5", stakes: .low, confidence: 0.95, expiresAt: at("2026-11-22T10:00:00Z"))),
                      now: at("2026-11-22T10:30:00Z"))
        } == .invalidInput)
        // A few seconds behind (an NTP step): raised to the head's time.
        try l.run(.propose(proposal("a2", stakes: .medium)), now: at("2026-11-22T10:29:55Z"))
        #expect(try l.read { try $0.actionState("a2")?.proposedAt } == at("2026-11-22T10:30:00Z"))
        #expect(code { try l.run(.propose(proposal("a3")), now: at("1970-01-01T00:00:00Z")) } == .invalidInput)
        #expect(code { try l.run(.propose(proposal("a4")), now: at("9999-01-01T00:00:00Z")) } == .invalidInput)
        #expect(try l.read { try $0.head().seq } == 4)
        // Verbatim appends (import, scenarios) obey the same rule.
        var late = try l.read { try $0.event(4)!.event }
        late.seq = 5
        late.commandId = "cmd-late"
        late.at = at("2026-11-22T09:00:00Z")
        // A time going backwards is a history the engine could not have written: the
        // replay rule, as an import reports it (integrity.md §5.4).
        let e = expectLedgerError(.replayMismatch) { try l.append(verbatim: [(late, nil)]) }
        #expect(e?.details["rule"] == .string("time.monotonic"))
        late.at = at("1999-12-31T23:59:59Z")
        #expect(code { try l.append(verbatim: [(late, nil)]) } == .invalidInput)
    }
}

/// The code of the `LedgerError` `body` throws; nil when it does not throw one.
func code(_ body: () throws -> Void) -> LedgerError.Code? {
    do { try body() } catch let e as LedgerError { return e.code } catch { return nil }
    return nil
}

extension DestructiveAndClockTests {
    /// A checkpoint signs a head that existed when it was made: one dated before the event
    /// it covers is refused by verify, even with a valid signature.
    @Test func aBackdatedCheckpointIsRefused() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        try l.run(.propose(proposal("a1")), now: at("2026-11-22T10:00:00Z"))
        let head = try l.read { try $0.head() }
        let key = CheckpointSigningKey()
        let honest = try Checkpoint(head: head, time: at("2026-11-22T10:00:01Z"), key: key)
        #expect(try l.verify(VerifyOptions(checkpoint: honest)).head == head)
        let backdated = try Checkpoint(head: head, time: at("2026-11-22T09:00:00Z"), key: key)
        try backdated.verifySignature(with: key.publicKey)
        let e = expectLedgerError(.integrityFailure) { try l.verify(VerifyOptions(checkpoint: backdated)) }
        #expect(e?.details["problem"] == "checkpoint_backdated")
        // The same in an export and an import of it.
        var bytes: [UInt8] = []
        try l.exportJSONL { bytes += $0 }
        let export = t.directory.appendingPathComponent("export.jsonl").path
        try Data(bytes).write(to: URL(fileURLWithPath: export))
        #expect(try ExportVerifier.verify(path: export, checkpoint: honest).head == head)
        let e2 = expectLedgerError(.integrityFailure) { _ = try ExportVerifier.verify(path: export, checkpoint: backdated) }
        #expect(e2?.details["problem"] == "checkpoint_backdated")
        let fresh = try TempLedger()
        let e3 = expectLedgerError(.integrityFailure) { _ = try fresh.ledger.importJSONL(path: export, checkpoint: backdated) }
        #expect(e3?.details["problem"] == "checkpoint_backdated")
        #expect(try fresh.ledger.importJSONL(path: export, checkpoint: honest) == head)
    }

    /// The signature covers the checkpoint's time as written: another spelling of the same
    /// instant is refused, not re-rendered into the signed one.
    @Test func aCheckpointsTimeIsTakenOnlyAsSigned() throws {
        let key = CheckpointSigningKey()
        let cp = try Checkpoint(head: LogHead(seq: 3, hash: .zero), time: at("2026-11-20T09:00:00Z"), key: key)
        #expect(try Checkpoint(json: cp.json) == cp)
        for spelling in ["2026-11-20T10:00:00.000+01:00", "2026-11-20T09:00:00Z", "2026-11-20T09:00:00.000999Z"] {
            guard case .object(var o) = cp.json else { return }
            o["time"] = .string(spelling)
            #expect(throws: LedgerError.self, "\(spelling)") { _ = try Checkpoint(json: .object(o)) }
        }
    }

    /// Seqs start at 1: a record keyed below it (seq 0, a short key) sorts before the walk's
    /// start and is refused, not skipped.
    @Test func anEventKeyedBelowSeqOneIsRefused() throws {
        for key in [[UInt8](repeating: 0, count: 8), [UInt8](repeating: 0, count: 7)] {
            let t = try TempLedger(), l = t.ledger!
            try l.link("iphone")
            let first = try l.read { r in try r.withRawEvent(1) { Array($0) } }!
            try l.environment.write { txn in try txn.put(l.dbs.events, key: key, value: first) }
            let e = expectLedgerError(.integrityFailure) { _ = try l.verify(VerifyOptions(deep: true)) }
            #expect(e?.details["problem"] == "bad_key", "\(key.count)-byte key")
        }
    }
}
