import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// Responses kept for `Idempotency-Key` replays expire after the retention and are pruned;
/// a replay after that still appends nothing.
@Suite struct IdempotencyRetentionTests {
    static let retention = SessionStore.defaultResponseRetention

    /// A replay a week and a day after its tap: the kept response was pruned, the engine
    /// still knows the command id, so nothing is appended and the answer is the action now.
    @Test func aReplayAfterTheRetentionAppendsNothingAndShowsTheActionNow() async throws {
        let skew = Locked<Int64>(0)
        let h = try ServerHarness(clock: { ServerHarness.systemNow().adding(milliseconds: skew.value) })
        // Tokens that outlive the jump (the harness's expire after a day).
        let now = ServerHarness.systemNow(), later = now.adding(milliseconds: 30 * Timestamp.day)
        let phone = try h.ledger.issueToken(org: "quinn-co", scope: .device, subject: "phone-1", expiresAt: later, now: now).secret
        let specialist = try h.ledger.issueToken(org: "quinn-co", scope: .specialist, subject: "content-onlyfans",
                                                 expiresAt: later, now: now).secret
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: specialist, json: proposalJSON("r1")).status == .created)
            let key: HTTPFields = [.idempotencyKey: "cmd-offline-review"]
            let first = try await client.call(.post, "/v1/actions/r1/review", token: phone, headers: key)
            #expect(first.status == .ok && first.json["action", "next_tap"] == "confirm")
            #expect(try await client.call(.post, "/v1/actions/r1/confirm", token: phone).status == .ok)
            let inside = try await client.call(.post, "/v1/actions/r1/review", token: phone, headers: key)
            #expect(inside.text == first.text && inside.headers[.idempotentReplayed] == "true")
            #expect(try h.server.sessions.storedResponses() == 3)

            skew.update { $0 = Self.retention + Timestamp.day }
            // The next kept response prunes the three expired ones.
            #expect(try await client.call(.post, "/v1/actions", token: specialist, json: proposalJSON("r2")).status == .created)
            #expect(try h.server.sessions.storedResponses() == 1)

            let head = try h.ledger.read { try $0.head().seq }
            let after = try await client.call(.post, "/v1/actions/r1/review", token: phone, headers: key)
            #expect(try h.ledger.read { try $0.head().seq } == head)
            #expect(after.status == .ok && after.headers[.idempotentReplayed] == "true")
            #expect(after.json["replayed"] == .bool(true) && after.json["command_id"] == "cmd-offline-review")
            // The same event as the first answer, and the action as it is now (confirmed since).
            #expect(after.json["events"] == first.json["events"])
            #expect(after.json["action", "next_tap"] == "approve")
            #expect(after.headers[.eTag] == first.headers[.eTag])
        }
    }

    /// The same key sent at once to two servers on one store: the one whose engine judges it
    /// a replay finds the other's response not kept yet. It waits for it (briefly), so both
    /// get the original body; here the other process's keep is played by a task.
    @Test func aReplayOfACommandCommittedAMomentAgoWaitsForItsKeptResponse() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("k1")).status == .created)
            let key: HTTPFields = [.idempotencyKey: "cmd-two-servers"]
            let first = try await client.call(.post, "/v1/actions/k1/review", token: h.phone, headers: key)
            #expect(first.status == .ok && first.json["replayed"] == .bool(false))
            let sessions = h.server.sessions
            let now = ServerHarness.systemNow()
            let kept = try #require(try sessions.response(commandId: "cmd-two-servers", now: now))
            // As if the first server had committed but not yet kept its response.
            #expect(try sessions.pruneResponses(now: now.adding(milliseconds: Self.retention + Timestamp.day)) >= 1)
            // Another process runs the command (its byte on the sessions file), keeps, then lets go.
            let other = try OtherServer(h, running: "cmd-two-servers")
            let keeper = Task {
                try await Task.sleep(for: .milliseconds(300))
                try sessions.keep(kept, commandId: "cmd-two-servers", at: now)
                other.finish()
            }
            let started = ContinuousClock.now
            let replay = try await client.call(.post, "/v1/actions/k1/review", token: h.phone, headers: key)
            try await keeper.value
            #expect(replay.text == first.text && replay.headers[.idempotentReplayed] == "true", "\(replay.text)")
            // It waited for the keep (the answer did not merely come after it).
            #expect(ContinuousClock.now - started >= .milliseconds(250))
            // A command no server runs (made through the CLI a moment ago, or its server gone:
            // committed, nothing kept) is answered at once, by the engine's replay.
            #expect(try sessions.pruneResponses(now: now.adding(milliseconds: Self.retention + Timestamp.day)) >= 1)
            let cliStarted = ContinuousClock.now
            let cli = try await client.call(.post, "/v1/actions/k1/review", token: h.phone, headers: key)
            #expect(cli.json["replayed"] == .bool(true))
            #expect(ContinuousClock.now - cliStarted < .milliseconds(1000), "\(cli.status) \(cli.text)")
        }
    }

    /// A request under a key another server process runs now waits for it to finish before
    /// it runs (else, committing first, it would leave that one a replay with nothing kept).
    @Test func aKeyAnotherServerRunsIsWaitedForBeforeRunning() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let other = try OtherServer(h, running: "cmd-held")
            let release = Task {
                try await Task.sleep(for: .milliseconds(300))
                other.finish()
            }
            let started = ContinuousClock.now
            let r = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("w1"),
                                          headers: [.idempotencyKey: "cmd-held"])
            try await release.value
            #expect(r.status == .created && ContinuousClock.now - started >= .milliseconds(250), "\(r.text)")
        }
    }

    /// Sessions: a sign-in drops the sessions that have expired, so the table (which an open
    /// stream's re-check and a revocation read) holds only the last lifetime's.
    @Test func aSignInDropsExpiredSessions() throws {
        let temp = try TempLedger()
        let store = try SessionStore(path: SessionStore.path(beside: temp.path), now: t0)
        func session(_ id: String, created: Timestamp, lifetime: Int64) -> SessionStore.Session {
            .init(id: id, device: "phone-1", person: "quinn", org: "quinn-co", createdAt: created,
                  expiresAt: created.adding(milliseconds: lifetime), keyFingerprint: nil, keySeq: nil)
        }
        let old = Ledger.tokenHash("als_old"), live = Ledger.tokenHash("als_live"), new = Ledger.tokenHash("als_new")
        try store.add(session("ses-old", created: t0, lifetime: Timestamp.hour), secretHash: old)
        try store.add(session("ses-live", created: t0, lifetime: Timestamp.day), secretHash: live)
        #expect(try store.session(secretHash: old)?.id == "ses-old")
        try store.add(session("ses-new", created: t0.adding(milliseconds: Timestamp.hour), lifetime: Timestamp.day), secretHash: new)
        #expect(try store.session(secretHash: old) == nil && store.session(id: "ses-old") == nil)
        #expect(try store.session(secretHash: live)?.id == "ses-live" && store.session(secretHash: new)?.id == "ses-new")
    }

    /// The store's side: a response counts as gone once past the retention even before it is
    /// pruned; pruning removes exactly the expired ones, and each new one prunes a bounded batch.
    @Test func expiredResponsesAreGoneAndPrunedInBatches() throws {
        let temp = try TempLedger()
        let store = try SessionStore(path: SessionStore.path(beside: temp.path), responseRetention: Timestamp.day, now: t0)
        let response = SessionStore.StoredResponse(status: 200, etag: "\"e\"", body: ["ok": .bool(true)])
        for n in 0..<40 { try store.keep(response, commandId: "old-\(n)", at: t0) }
        try store.keep(response, commandId: "recent", at: t0.adding(milliseconds: Timestamp.hour))
        #expect(try store.response(commandId: "old-0", now: t0.adding(milliseconds: Timestamp.day)) == response)
        let expiry = t0.adding(milliseconds: Timestamp.day + 1)
        #expect(try store.response(commandId: "old-0", now: expiry) == nil)
        #expect(try store.response(commandId: "recent", now: expiry) == response)
        #expect(try store.storedResponses() == 41)
        try store.keep(response, commandId: "new", at: expiry)
        #expect(try store.storedResponses() == 42 - SessionStore.pruneBatch)
        #expect(try store.pruneResponses(now: expiry) == 40 - SessionStore.pruneBatch)
        #expect(try store.storedResponses() == 2)
        #expect(try store.response(commandId: "recent", now: expiry) == response)
    }

    /// Responses kept by a build without retention (no time in the record) are dated when the
    /// file is opened, and expire one retention later.
    @Test func responsesKeptWithoutATimeAreDatedOnOpen() throws {
        let temp = try TempLedger()
        let path = SessionStore.path(beside: temp.path)
        do {
            let env = try Environment(path: path)
            try env.write { txn in
                let record: JSON = ["status": .number(201), "etag": .null, "body": ["action_id": "a1"]]
                try txn.put(try txn.openDatabase("responses")!, key: Array("legacy".utf8), value: Array(record.serialized().utf8))
            }
        }
        let store = try SessionStore(path: path, responseRetention: Timestamp.day, now: t0)
        #expect(try store.response(commandId: "legacy", now: t0)?.status == 201)
        #expect(try store.pruneResponses(now: t0.adding(milliseconds: Timestamp.day)) == 0)
        #expect(try store.pruneResponses(now: t0.adding(milliseconds: Timestamp.day + 1)) == 1)
        #expect(try store.response(commandId: "legacy", now: t0) == nil)
    }
}

/// Another server process running a command on the harness's store: a descriptor of its
/// sessions file of its own, holding the command's byte (SessionStore+Responses.swift) until
/// ``finish()``.
final class OtherServer: Sendable {
    let fd: Int32
    let byte: Int64

    init(_ h: ServerHarness, running commandId: String) throws {
        fd = open(SessionStore.path(beside: h.ledger.environment.path), O_RDWR)
        byte = SessionStore.runningByte(commandId)
        #expect(fd >= 0 && RangeLock(fd: fd).lock(byte, shared: false))
    }

    func finish() { RangeLock(fd: fd).unlock(byte) }

    deinit { close(fd) }
}
