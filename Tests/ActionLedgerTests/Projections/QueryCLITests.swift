import Foundation
import Testing
@testable import ActionLedger

/// The query commands as operators run them: real processes, the documented JSON keys,
/// `--read-only`, CSV, exit statuses.
@Suite struct QueryCLITests {
    /// The suite's store and scratch files, removed when the test's suite instance goes.
    let fixture: ProcessFixture
    var dir: URL { fixture.dir }
    var db: String { fixture.db }

    init() throws { fixture = try ProcessFixture("qcli") }

    func ledger(_ args: String...) throws -> LedgerProcess.Output {
        try LedgerProcess.run(args + ["--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
    }

    func json(_ args: String...) throws -> JSON {
        let out = try LedgerProcess.run(args + ["--db", db, "--json"], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
        #expect(out.status == 0, "\(args): \(out.stderr)")
        return try JSONParser.parse(out.stdout)
    }

    func keys(_ j: JSON?) -> [String] {
        if case .object(let o)? = j { return o.keys }
        return []
    }

    @Test func queriesPrintTheDocumentedKeysReadOnly() throws {
        #expect(try ledger("demo").status == 0)
        let today = try json("today", "--person", "quinn", "--read-only")
        #expect(Array(keys(today).prefix(3)) == ["person", "now", "count"])
        #expect(keys(today).contains("items") && keys(today).contains("auto_shipped_24h"))
        #expect(keys(today["auto_shipped_24h"]) == ["count", "by_kind"])
        guard case .array(let items)? = today["items"], let first = items.first else { Issue.record("no items"); return }
        #expect(Array(keys(first).prefix(3)) == ["action_id", "stakes", "next_tap"])

        let shipped = try json("audit", "autoshipped", "--read-only")
        #expect(keys(shipped).contains("count") && keys(shipped).contains("by_kind") && keys(shipped).contains("items"))
        guard case .array(let ships)? = shipped["items"], let ship = ships.first else { Issue.record("no auto-ships"); return }
        for k in ["action_id", "at", "policy_version", "rule"] { #expect(keys(ship).contains(k)) }

        guard case .string(let id)? = first["action_id"] else { Issue.record("today's first item has no action_id: \(first)"); return }
        let trail = try json("audit", "action", id, "--read-only")
        #expect(keys(trail) == ["action_id", "state", "trail"])
        guard case .array(let lines)? = trail["trail"], let line = lines.first else { Issue.record("no trail"); return }
        #expect(Array(keys(line).prefix(5)) == ["seq", "type", "actor", "device", "at"])

        let csv = try ledger("audit", "actor", "quinn", "--csv", "--read-only")
        let rows = csv.stdout.split(separator: "\n")
        #expect(csv.status == 0 && rows.first == Substring((AuditEntry.csvHeader + ["proof_level", "key_fingerprint"]).joined(separator: ",")) && rows.count > 2)
        let activity = try json("activity", "--person", "quinn", "--type", "action.held,action.dismissed", "--read-only")
        #expect(activity["count"] == 2)
        let status = try json("projections", "--read-only")
        guard case .array(let ps)? = status["projections"] else { Issue.record("no projections"); return }
        // Live, and trailing the head by less than the default maxLag (32): the demo's tail
        // is folded by each query, not by a commit.
        #expect(ps.count == 5 && ps.allSatisfy {
            guard case .number(let lag)? = $0["lag"] else { return false }
            return $0["state"] == "live" && lag < 32
        })

        #expect(try ledger("audit", "action", "nope").status == LedgerError.Code.unknownAction.exitStatus)
        #expect(try ledger("audit", "autoshipped", "--since", "24x").status == LedgerError.Code.invalidInput.exitStatus)
        #expect(try ledger("rebuild", "--read-only").status == LedgerError.Code.readOnly.exitStatus)
    }

    @Test func rebuildVerifyExitsNonZeroOnADifferenceAndBusyWhileLocked() throws {
        #expect(try ledger("demo").status == 0)
        let ok = try json("rebuild", "--verify")
        guard case .array(let results)? = ok["projections"] else { Issue.record("no results"); return }
        #expect(results.allSatisfy { $0["equal"] == true && $0["swapped"] == false })

        let l = try Ledger(path: db)
        let meta = try l.environment.read { try l.registry.meta("devices", in: $0)! }
        try l.environment.write { txn in
            let store = try l.registry.store(for: DevicesProjection(), meta: meta, in: txn)!
            try txn.put(store.database, key: ProjectionStore.physicalKey(0, DevicesProjection.key("quinn", "zz-ghost")),
                        value: [1, 2, 3])
        }
        let bad = try ledger("rebuild", "--verify", "--projection", "devices", "--json")
        #expect(bad.status == LedgerError.Code.integrityFailure.exitStatus)
        #expect(bad.stderr.contains("zz-ghost") && bad.stderr.contains("only in the live projection"))
        let report = try JSONParser.parse(bad.stdout)
        guard case .array(let rs)? = report["projections"] else { Issue.record("no results"); return }
        #expect(rs.first?["difference"]?["database"] == "devices")

        do {
            let lock = try RebuildLock(ledgerPath: db)
            #expect(try ledger("rebuild").status == LedgerError.Code.busy.exitStatus)
            withExtendedLifetime(lock) {}
        }
        #expect(try ledger("rebuild", "--projection", "devices").status == 0)
        #expect(try ledger("rebuild", "--verify").status == 0)
    }

    /// `verify --deep` compares every projection with a refold of the log, as `rebuild
    /// --verify` does: an audit listing filed under someone who never acted fails it.
    @Test func verifyDeepFindsATamperedAuditListing() throws {
        #expect(try ledger("demo").status == 0)
        let clean = try json("verify", "--deep")
        #expect(clean["projections_equal"] == .array(["today", "autoshipped", "audit", "devices", "activity"].map(JSON.string)),
                "\(clean)")
        let l = try Ledger(path: db)
        let meta = try l.environment.read { try l.registry.meta("audit", in: $0)! }
        try l.environment.write { txn in
            let store = try l.registry.store(for: AuditProjection(), meta: meta, in: txn)!
            try txn.put(store.postingDatabase!, key: [UInt8(AuditProjection.byActor)] + Array("mallory".utf8) + [0] + Keys.u64(7),
                        value: Keys.u64(7))
        }
        let bad = try ledger("verify", "--deep", "--json")
        #expect(bad.status == LedgerError.Code.integrityFailure.exitStatus, "\(bad.stdout) \(bad.stderr)")
        #expect(bad.stderr.contains("projection audit") && bad.stdout.contains("projection_mismatch"))
        // The plain walk (log and chain) still passes: the projection is derived state.
        #expect(try ledger("verify").status == 0)
    }

    /// A projection so damaged that its stored state cannot take the log's tail (Today's
    /// feed entries renamed, as a bit-rotted page would hold them) fails `verify --deep` as
    /// every other difference does: `integrity_failure`, `projection_mismatch`, naming it.
    @Test func verifyDeepReportsAProjectionThatCannotTakeTheTail() throws {
        #expect(try ledger("demo").status == 0)
        let l = try Ledger(path: db)
        let meta = try l.environment.read { try l.registry.meta("today", in: $0)! }
        let head = try l.read { try $0.head().seq }
        #expect(meta.checkpoint < head, "the demo leaves a tail for queries to fold")
        try l.environment.write { txn in
            let store = try l.registry.store(for: TodayProjection(), meta: meta, in: txn)!
            var renamed: [([UInt8], [UInt8])] = []
            try txn.scan(store.database) { k, v in
                let key = Array(k)
                if let i = key.firstIndex(of: UInt8(ascii: "u")), key.count > i + 3, Array(key[i - 1...i + 3]) == Array("quinn".utf8) {
                    var bent = key
                    bent[i] ^= 0x08
                    renamed.append((key, bent + Array(v)))
                }
                return true
            }
            #expect(!renamed.isEmpty)
            for (key, _) in renamed { _ = try txn.delete(store.database, key: key) }
            for (key, both) in renamed { try txn.put(store.database, key: both.prefix(key.count), value: both.dropFirst(key.count)) }
        }
        let bad = try ledger("verify", "--deep", "--json")
        #expect(bad.status == LedgerError.Code.integrityFailure.exitStatus, "\(bad.stdout) \(bad.stderr)")
        #expect(bad.stdout.contains("projection_mismatch") && bad.stdout.contains("\"projection\":\"today\""), "\(bad.stdout)")
        #expect(try ledger("rebuild", "--projection", "today").status == 0)
        #expect(try ledger("verify", "--deep").status == 0)
    }

    /// With `--json`, a replay that finds a mismatch prints one JSON document (its report,
    /// naming the mismatch), the refusal on stderr, and exits `replay_mismatch`.
    @Test func auditReplayJSONIsOneDocumentOnAMismatch() throws {
        #expect(try ledger("demo").status == 0)
        let l = try Ledger(path: db)
        let first = try l.read { r in try r.command(try r.event(5)!.event.commandId) }
        #expect(first != nil)
        // A damaged commands index: the replay's command.unique check names seq 5.
        let id = try l.read { try $0.event(5)!.event.commandId }
        try l.environment.write { txn in _ = try l.dbs.commands.delete(txn, key: Array(id.utf8)) }
        let out = try ledger("audit", "replay", "--json")
        #expect(out.status == LedgerError.Code.replayMismatch.exitStatus)
        let doc = try JSONParser.parse(out.stdout)
        #expect(doc["ok"] == false && doc["mismatch"]?["seq"] == 5, "\(out.stdout)")
        #expect(out.stderr.contains("replay_mismatch"))
    }
}
