import Foundation
import Testing
@testable import ActionLedger
@testable import ledger_cli

/// What a conformance attack on the CLI found: input the engine took that its own log
/// format refuses, and checks a command made too late or not at all.
@Suite struct ContractFindingsTests {
    let fixture: ProcessFixture
    init() throws { fixture = try ProcessFixture("contract") }

    func events() throws -> Int { try fixture.ledger(["log"]).stdout.split(separator: "\n").count }

    /// A revocation's reason over the event's 4 096 bytes was recorded, and the store's own
    /// export then failed to import. The engine refuses it, whoever sends it; at the limit
    /// it is taken and the export imports.
    @Test func aReasonTheLogCannotHoldIsRefusedBeforeAnythingIsWritten() throws {
        #expect(try fixture.ledger(["devices", "link", "d1", "--person", "p1", "--org", "o1", "--label", "L", "--platform", "ios"]).status == 0)
        let token = try fixture.ledger(["tokens", "issue", "--scope", "auditor", "--org", "o1", "--json"])
        let id = try #require(String(token.stdout.split(separator: "\"")[3]))
        let long = String(repeating: "r", count: FieldReader.Limit.rationale + 1)
        let before = try events()
        for args in [["devices", "revoke", "d1", "--reason", long], ["tokens", "revoke", id, "--reason", long],
                     ["dismiss", "nothing", "--device", "d1", "--reason", long]] {
            let out = try fixture.ledger(args + ["--json"])
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stdout.contains("\"field\":\"reason\""),
                    "\(args[0]) \(args[1]): \(out.status) \(out.stdout)")
        }
        #expect(try events() == before)
        // The engine's own API too (the server's routes reach it with a body's reason).
        let refused = try fixture.withLedger { l in
            Result { try l.execute(CommandRequest(.revokeDevice(device: "d1", reason: long), now: at("2026-11-22T09:00:00Z"))) }
        }
        #expect(throws: LedgerError.self) { try refused.get() }
        let limit = String(repeating: "r", count: FieldReader.Limit.rationale)
        #expect(try fixture.ledger(["devices", "revoke", "d1", "--reason", limit]).status == 0)
        #expect(try fixture.ledger(["tokens", "revoke", id, "--reason", limit]).status == 0)
        let export = fixture.path("e.jsonl")
        #expect(try fixture.ledger(["export", "--out", export]).status == 0)
        let imported = try fixture.ledger(["import", export], db: fixture.path("i.lmdb"))
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    /// No option is hidden from the help: a hidden `rebuild --pause-ms` (a test's way to slow
    /// a rebuild) shipped in the binary, and a huge value trapped on an overflow.
    @Test func theBinaryHasNoHiddenOptions() throws {
        let dump = try LedgerProcess.run(["--experimental-dump-help"])
        #expect(dump.status == 0)
        var hidden: [String] = []
        func walk(_ command: JSON, _ path: String) {
            if case .array(let arguments)? = command["arguments"] {
                for a in arguments where a["shouldDisplay"] == .bool(false) { hidden.append("\(path): \(a["valueName"] ?? .null)") }
            }
            if case .array(let subcommands)? = command["subcommands"] {
                for s in subcommands where s["commandName"] != .string("help") {
                    if case .string(let name)? = s["commandName"] { walk(s, path + " " + name) }
                }
            }
        }
        walk(try #require(try JSONParser.parse(dump.stdout)["command"]), "ledger")
        #expect(hidden.isEmpty, "\(hidden)")
        let paused = try fixture.ledger(["rebuild", "--pause-ms", "9223372036854775807"])
        #expect(paused.status == 64 && !paused.signalled, "\(paused.status) \(paused.stderr)")
    }

    /// An input file past what it may hold is refused as it is read: `/dev/zero` had the
    /// process allocate until it aborted, which was then reported as damage to the store.
    @Test func anEndlessInputFileIsRefusedNotReadIntoMemory() throws {
        for args in [["propose", "/dev/zero"], ["propose", "--batch", "/dev/zero"], ["policy", "set", "/dev/zero", "--org", "o1"],
                     ["checkpoint", "--key", "/dev/zero"], ["verify", "--checkpoint", "/dev/zero", "--pubkey", "/dev/zero"]] {
            let out = try fixture.ledger(args + ["--json"])
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus && !out.signalled && out.stdout.contains("longer than"),
                    "\(args): \(out.status) \(out.stdout.prefix(300))")
        }
    }

    /// Output that cannot be written is a failure the command reports: a closed pipe had
    /// killed it with SIGPIPE (exit 141, no word), and help to a full disk had exited 0.
    @Test func lostOutputIsAFailureNeverADeathOrASuccess() throws {
        let closedPipe = """
            import os, subprocess, sys
            r, w = os.pipe(); os.close(r)
            p = subprocess.run([sys.argv[1]] + sys.argv[3:] + ["--db", sys.argv[2]], stdout=w, stderr=subprocess.PIPE)
            print(p.returncode); print(p.stderr.decode())
            """
        for args in [["log"], ["log", "--json"], ["today", "--person", "quinn"]] {
            let out = try Child("/usr/bin/python3", ["-c", closedPipe, LedgerProcess.binary, fixture.db] + args).finish(within: 60)
            #expect(out.stdout.hasPrefix("1\n") && out.stdout.contains("storage_error"), "\(args): \(out.stdout)")
        }
        for args in ["--help", "help show", "show --help", ""] {
            let out = try Child("/bin/sh", ["-c", "exec \"$0\" \(args) > /dev/full", LedgerProcess.binary]).finish(within: 60)
            #expect(out.status == LedgerError.Code.storage.exitStatus && out.stderr.contains("could not write"), "\(args): \(out.status)")
        }
        #expect(try LedgerProcess.run(["--help"]).status == 0)
    }

    /// A key pair's prefix must name a file: an empty one or a folder had made the hidden
    /// `.key`/`.pub` there. The files are whole under their names, 0600 and 0644.
    @Test func keygenTakesAFileNamePrefixOnly() throws {
        let folder = fixture.path("keys")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for command in [["keygen"], ["devices", "keygen"]] {
            for prefix in ["", folder + "/", folder + "/.", folder + "/.."] {
                let out = try fixture.ledger(command + ["--out", prefix])
                #expect(out.status == LedgerError.Code.invalidInput.exitStatus, "\(command) \(prefix): \(out.status) \(out.stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).allSatisfy { !$0.hasPrefix(".") })
            let prefix = folder + "/" + command.joined(separator: "-")
            #expect(try fixture.ledger(command + ["--out", prefix]).status == 0)
            for (suffix, mode) in [(".key", 0o600), (".pub", 0o644)] {
                let attributes = try FileManager.default.attributesOfItem(atPath: prefix + suffix)
                #expect(attributes[.posixPermissions] as? Int == mode && (attributes[.size] as? Int ?? 0) > 0, "\(prefix)\(suffix)")
            }
        }
    }

    /// A path no store can be moved to is refused before the day is recorded: `demo --db ''`
    /// built the whole store beside it, then failed with `storage_error` and left a `-lock`.
    @Test func demoRefusesAPathNoStoreCanTakeBeforeAnyWork() throws {
        let folder = fixture.path("demo-here")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for db in ["", "no-such-folder/d.lmdb", "ends-in/"] {
            let out = try Child("/bin/sh", ["-c", "cd \"$1\" && exec \"$0\" demo --db \"$2\" --json", LedgerProcess.binary, folder, db])
                .finish(within: 60)
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus, "\(db): \(out.status) \(out.stdout)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    /// A query for a name no event can hold (empty, or longer than an id) is refused, naming
    /// the option: it had answered "nothing", as if there were nothing to find. (Characters
    /// are not judged there: ids stored before the identifier rules stay readable.)
    @Test func queriesRefuseNamesNoEventCanHold() throws {
        let cases: [[String]] = [
            ["today", "--person", ""], ["today", "--person", String(repeating: "p", count: 129)], ["activity", "--person", ""],
            ["activity", "--person", "quinn", "--type", ""], ["audit", "devices", "--person", ""],
            ["audit", "autoshipped", "--person", ""], ["audit", "actor", ""], ["audit", "specialist", ""],
            ["audit", "surface", ""], ["audit", "device", ""], ["show", ""], ["audit", "action", ""], ["tokens", "revoke", ""],
            ["tokens", "revoke", "tok a"], ["audit", "replay", "--from", "9007199254740993"], ["audit", "actor", "quinn", "--since", "01h"],
            ["audit", "actor", "quinn", "--since", "+1h"],
        ]
        for args in cases {
            let out = try fixture.ledger(args + ["--json"])
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus, "\(args): \(out.status) \(out.stdout)")
        }
        // Free text stays free: a specialist's name may hold a space.
        #expect(try fixture.ledger(["audit", "specialist", "Mia Lee"]).status == 0)
        #expect(try fixture.ledger(["audit", "actor", "specialist:Mia Lee"]).status == 0)
    }

    /// A token whose secret could not be printed is live and nobody holds it: the failure
    /// names it, so the operator can revoke it (it had said only that stdout failed).
    @Test func aTokenWhoseSecretIsLostIsNamedForRevocation() throws {
        let out = try Child("/bin/sh", ["-c", "exec \"$0\" tokens issue --org o1 --scope auditor --db \"$1\" > /dev/full",
                                        LedgerProcess.binary, fixture.db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
            .finish(within: 60)
        #expect(out.status == LedgerError.Code.storage.exitStatus && out.stderr.contains("secret is lost"), "\(out.stderr)")
        let id = try #require(out.stderr.split(separator: " ").first { $0.hasPrefix("tok-") }.map(String.init))
        #expect(try fixture.ledger(["tokens", "revoke", id]).status == 0)
    }

    /// verify takes its clock as every command does: `LEDGER_NOW` on a production store is
    /// refused (it had been ignored there); and a key with no checkpoint to check is refused,
    /// not ignored as if something had been proven with it.
    @Test func verifyRefusesATestClockOnAProductionStoreAndAKeyWithNothingToCheck() throws {
        let production = fixture.path("production.lmdb")
        #expect(try LedgerProcess.run(["init", "--db", production]).status == 0)
        for args in [["verify"], ["log"], ["export"], ["projections"], ["audit", "replay"], ["policy", "show"], ["rebuild"]] {
            let clocked = try LedgerProcess.run(args + ["--db", production], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
            #expect(clocked.status == LedgerError.Code.testClockOnly.exitStatus, "\(args): \(clocked.status) \(clocked.stderr)")
        }
        #expect(try LedgerProcess.run(["verify", "--db", production]).status == 0)
        #expect(try fixture.ledger(["keygen", "--out", fixture.path("cp")]).status == 0)
        let keyOnly = try fixture.ledger(["verify", "--pubkey", fixture.path("cp.pub")])
        #expect(keyOnly.status == LedgerError.Code.invalidInput.exitStatus && keyOnly.stderr.contains("--checkpoint"), "\(keyOnly.stderr)")
    }

    /// Times a command gives (an expiry, a schedule, a hold's end) stay within the engine's
    /// 2000…2100, as a token's expiry does: a year past 9999 has no ISO-8601 form, and the
    /// store's own export would then be refused.
    @Test func timesACommandGivesStayWithinTheEnginesRange() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        let far = at("2200-01-01T00:00:00Z")
        let expiring = expectLedgerError(.invalidInput) { try l.run(.propose(proposal("e1", expiresAt: far))) }
        #expect(expiring?.details["field"] == "expires_at")
        var scheduled = proposal("s1")
        scheduled.proposal.scheduledFor = Timestamp(milliseconds: 300_000_000_000_000)
        #expect(expectLedgerError(.invalidInput) { try l.run(.propose(scheduled)) }?.details["field"] == "scheduled_for")
        try l.run(.propose(proposal("h1")))
        #expect(expectLedgerError(.invalidInput) { try l.run(.hold(actionId: "h1", device: "iphone", until: far)) }?.details["field"] == "until")
        try l.run(.hold(actionId: "h1", device: "iphone", until: at("2099-12-31T23:59:59Z")))
    }

    /// An option given twice is refused (ArgumentParser kept the last: `review --device d1
    /// --device d2` recorded d2); lists and flags may repeat. The CLI's own lists of them match
    /// what the commands declare.
    @Test func anOptionGivenTwiceIsRefused() throws {
        #expect(try fixture.ledger(["devices", "link", "d1", "--person", "p1", "--org", "o1", "--label", "L", "--platform", "ios"]).status == 0)
        let before = try events()
        let twice = try fixture.ledger(["devices", "revoke", "d1", "--reason", "lost", "--reason=stolen", "--json"])
        #expect(twice.status == LedgerError.Code.invalidInput.exitStatus && twice.stdout.contains("\"field\":\"reason\""), "\(twice.stdout)")
        #expect(try events() == before)
        #expect(try fixture.ledger(["log", "--json", "--json"]).status == 0)
        #expect(try fixture.ledger(["activity", "--person", "p1", "--type", "device.linked", "--type", "device.revoked"]).status == 0)
        let dump = try JSONParser.parse(try LedgerProcess.run(["--experimental-dump-help"]).stdout)
        var flags: Set<String> = [], repeating: Set<String> = []
        func walk(_ c: JSON) {
            if case .array(let arguments)? = c["arguments"] {
                for a in arguments {
                    guard case .array(let names)? = a["names"] else { continue }
                    for n in names where n["kind"] == .string("long") {
                        guard case .string(let name)? = n["name"] else { continue }
                        if a["kind"] == .string("flag") { flags.insert("--" + name) }
                        if a["kind"] == .string("option"), a["isRepeating"] == .bool(true) { repeating.insert("--" + name) }
                    }
                }
            }
            if case .array(let subcommands)? = c["subcommands"] { subcommands.forEach(walk) }
        }
        walk(try #require(dump["command"]))
        #expect(flags == Arguments.flags && repeating == Arguments.repeatable, "flags \(flags), lists \(repeating)")
    }

    /// What the engine records, its export restores: a specialist's name of up to its 256
    /// bytes makes an actor past an id's 128 (`specialist:NAME`), and an outcome document of
    /// 32 levels sits two levels down in its export line. Import had refused both.
    @Test func aLongSpecialistNameAndADeepOutcomeSurviveExportAndImport() throws {
        let name = String(repeating: "é", count: 128)  // 256 bytes
        let proposal = #"{"action_id":"a1","org":"o1","person":"p1","specialist":{"name":""# + name
            + #"","agent":"ag"},"surface":"x","kind":"k","target":{"type":"t","id":"i"},"stakes":"low","confidence":0.1,"#
            + #""preview":{"text":"x"},"rationale":""}"#
        #expect(try fixture.ledger(["propose", "-"], stdin: proposal).status == 0)
        #expect(try fixture.ledger(["devices", "link", "d1", "--person", "p1", "--org", "o1", "--label", "L", "--platform", "ios"]).status == 0)
        #expect(try fixture.ledger(["approve", "a1", "--device", "d1"]).status == 0)
        let deep = "{\"a\":" + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}"  // 32 levels
        let executed = try fixture.ledger(["execute", "a1", "--outcome", deep])
        #expect(executed.status == 0, "\(executed.stderr)")
        let export = fixture.path("long.jsonl")
        #expect(try fixture.ledger(["export", "--out", export]).status == 0)
        #expect(try fixture.ledger(["verify", "--export", export]).status == 0)
        let imported = try fixture.ledger(["import", export], db: fixture.path("long.lmdb"))
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try fixture.ledger(["log"], db: fixture.path("long.lmdb")).stdout == fixture.ledger(["log"]).stdout)
        #expect(try fixture.ledger(["audit", "actor", "specialist:" + name]).stdout.contains("a1"))
    }

    /// A relying party's origin names a TCP port a browser could send: 0, past 65535 or with
    /// a leading zero is refused (no proof could ever match it); a usual one is taken.
    @Test func aRelyingPartyOriginNamesARealPort() throws {
        for port in ["65536", "0", "08443", "443"] {
            let out = try fixture.ledger(["relying-party", "set", "--rp-id", "example.com", "--origin", "https://example.com:" + port, "--json"])
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stdout.contains("origins"), "\(port): \(out.stdout)")
        }
        #expect(try fixture.ledger(["relying-party", "set", "--rp-id", "example.com", "--origin", "https://example.com:8443",
                                    "--origin", "http://localhost:3000"]).status == 0)
    }

    /// Only a proposal's actor may be a specialist's long name: on any other event an actor
    /// past an id's 128 bytes is refused on import, as the engine refuses it on a command.
    @Test func onlyAProposalsActorIsLong() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.run(.propose(proposal("p1")))
        let proposed = try #require(try l.read { try $0.actionEvents("p1").first })
        let long = "specialist:" + String(repeating: "X", count: 200)
        guard case .object(var o) = proposed.json else { Issue.record("no object"); return }
        o["actor"] = .string(long)
        #expect(throws: Never.self) { _ = try Event(json: .object(o)) }
        o["type"] = .string("action.expired")
        o["data"] = .object([:])
        o["schema_version"] = .number(1)
        let e = expectLedgerError(.invalidInput) { _ = try Event(json: .object(o)) }
        #expect(e?.message.contains("actor") == true, "\(String(describing: e))")
        // serve takes its options once too (it runs apart from the other commands' path).
        let serve = try fixture.ledger(["serve", "--listen", "127.0.0.1:0", "--listen", "127.0.0.1:1"])
        #expect(serve.status == LedgerError.Code.invalidInput.exitStatus && serve.stderr.contains("more than once"), "\(serve.stderr)")
    }

    /// null counts as absent (events.md): a proposal's `assets: null` is none, and an
    /// outcome of null is an empty one on the CLI as over HTTP; refusals name their field.
    @Test func nullCountsAsAbsentAndRefusalsNameTheirField() throws {
        let proposal = #"{"action_id":"n1","org":"o1","person":"p1","specialist":{"name":"S","agent":"ag"},"surface":"x","kind":"k","#
            + #""target":{"type":"t","id":"i"},"stakes":"low","confidence":0.1,"preview":{"text":"x","assets":null},"rationale":""}"#
        let proposed = try fixture.ledger(["propose", "-"], stdin: proposal)
        #expect(proposed.status == 0, "\(proposed.stderr)")
        #expect(try fixture.ledger(["devices", "link", "d1", "--person", "p1", "--org", "o1", "--label", "L", "--platform", "ios"]).status == 0)
        #expect(try fixture.ledger(["approve", "n1", "--device", "d1"]).status == 0)
        let executed = try fixture.ledger(["execute", "n1", "--outcome", "null"])
        #expect(executed.status == 0, "\(executed.stderr)")
        for (args, field) in [(["review", "n1", "--device", "d1", "--content-hash", "zz"], "content_hash"),
                              (["devices", "link", "d2", "--person", "p1", "--org", "o1", "--label", "", "--platform", "ios"], "label")] {
            let out = try fixture.ledger(args + ["--json"])
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stdout.contains("\"field\":\"\(field)\""),
                    "\(args[0]): \(out.stdout)")
        }
    }
}
