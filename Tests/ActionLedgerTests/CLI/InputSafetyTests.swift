import Foundation
import Testing
@testable import ActionLedger

/// Issue 11 §6: identifiers limited to a safe set, and the smaller input defects
/// (invalid UTF-8, FIFOs, keygen, expire twice, unknown device audit, read-only files,
/// the stress workers out of the shipped CLI).
@Suite struct InputSafetyTests {
    /// The suite's store and scratch files, removed when the test's suite instance goes.
    let fixture: ProcessFixture
    var dir: URL { fixture.dir }
    var db: String { fixture.db }

    init() throws { fixture = try ProcessFixture("in") }

    func ledger(_ args: [String], stdin: String? = nil, now: String = "2026-11-22T09:00:00Z") throws -> LedgerProcess.Output {
        try LedgerProcess.run(args + ["--db", db], environment: ["LEDGER_NOW": now], stdin: stdin)
    }

    /// Events recorded after the store's own `store.created` (seq 1, the test clock).
    func head() throws -> UInt64 {
        let l = try Ledger(path: db, options: Ledger.Options(readOnly: true))
        return try l.read { try $0.head().seq } - 1
    }

    static func proposal(_ id: String = "p1", org: String = "quinn-co", agent: String = "content-onlyfans",
                         commandId: String? = nil, expires: String? = nil) -> String {
        let cid = commandId.map { #","command_id":"\#($0)""# } ?? ""
        let exp = expires.map { #","expires_at":"\#($0)""# } ?? ""
        return #"{"action_id":"\#(id)","org":"\#(org)","person":"quinn","specialist":{"name":"Sasha","agent":"\#(agent)"},"surface":"onlyfans","kind":"publish_post","target":{"type":"feed","id":"of:quinn"},"stakes":"medium","confidence":0.7,"preview":{"text":"New set","assets":3,"price":9.99},"rationale":"peak"\#(cid)\#(exp)}"#
    }

    @Test(arguments: ["a\\u0085b", "a\\u2028b", "a\\u202eb", "a\\u00a0b", "a\\u3000b", "a\\ufeffb", "a\\u200bb", "\\u0430b", "a/b"])
    func identifiersOutsideTheSafeSetAreRefusedNamingTheField(_ bad: String) throws {
        for (field, json) in [("action_id", Self.proposal(bad)), ("org", Self.proposal(org: bad)),
                              ("specialist.agent", Self.proposal(agent: bad)), ("command_id", Self.proposal(commandId: bad))] {
            let out = try ledger(["propose", "-", "--json"], stdin: json)
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus, "\(field) \(bad)")
            #expect(try JSONParser.parse(out.stdout)["error"]?["field"] == .string(field), "\(out.stdout)")
        }
        #expect(try head() == 0)
    }

    @Test func deviceActorAndPolicyOrgIdsAreRefusedOutsideTheSet() throws {
        for args in [["devices", "link", "a\u{00A0}b", "--person", "quinn", "--org", "quinn-co", "--label", "x", "--platform", "ios"],
                     ["devices", "link", "ok", "--person", "qu\u{2028}inn", "--org", "quinn-co", "--label", "x", "--platform", "ios"],
                     ["devices", "link", "ok", "--person", "quinn", "--org", "quinn-co", "--label", "x", "--platform", "ios", "--actor", "op\u{202E}"],
                     ["devices", "link", "ok", "--person", "quinn", "--org", "quinn-co", "--label", "x", "--platform", "ios", "--command-id", "c\u{0085}"]] {
            let out = try ledger(args)
            #expect(out.status == LedgerError.Code.invalidInput.exitStatus, "\(args)")
            #expect(out.stderr.contains("ASCII letters, digits"), "\(out.stderr)")
        }
        let policy = try ledger(["policy", "set", "-", "--org", "evil\u{3000}co"], stdin: "{}")
        #expect(policy.status == LedgerError.Code.invalidInput.exitStatus)
        #expect(try head() == 0)
        // The whole safe set is accepted.
        #expect(try ledger(["devices", "link", "Ab-9_.:@x", "--person", "q@co", "--org", "quinn-co", "--label", "x", "--platform", "ios"]).status == 0)
    }

    @Test func importedEventsCarryOnlySafeIds() throws {
        let line = #"{"seq":1,"type":"device.linked","schema_version":1,"at":"2026-11-22T09:00:00.000Z","actor":"operator","device":null,"command_id":"c1","org":"quinn-co","person":"qu\u00a0inn","data":{"device":"iphone","label":"x","platform":"ios"}}"#
        #expect(throws: LedgerError.self) { try Event(json: try JSONParser.parse(line)) }
        let ok = line.replacingOccurrences(of: #"qu\u00a0inn"#, with: "quinn")
        #expect(try Event(json: try JSONParser.parse(ok)).person == "quinn")
    }

    @Test func aSecondExpireSaysTheActionAlreadyExpired() throws {
        #expect(try ledger(["propose", "-"], stdin: Self.proposal(expires: "2026-11-22T10:00:00Z")).status == 0)
        #expect(try ledger(["expire", "p1"], now: "2026-11-22T11:00:00Z").status == 0)
        let again = try ledger(["expire", "p1", "--json"], now: "2026-11-22T11:00:00Z")
        #expect(again.status == LedgerError.Code.alreadyDecided.exitStatus)
        #expect(again.stderr.contains("already expired") && !again.stderr.contains("has not expired"))
    }

    /// Runs `ledger` through bash, for arguments Foundation cannot pass (invalid UTF-8) and `<(…)`.
    func bash(_ script: String) throws -> LedgerProcess.Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", script, "bash", LedgerProcess.binary, db]
        p.environment = ProcessInfo.processInfo.environment.merging(["LEDGER_NOW": "2026-11-22T09:00:00Z"]) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return LedgerProcess.Output(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                                    stderr: String(decoding: e, as: UTF8.self))
    }

    @Test func invalidUTF8InAnArgumentIsRefusedNotStoredAsReplacement() throws {
        #expect(try ledger(["devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "x", "--platform", "ios"]).status == 0)
        #expect(try ledger(["propose", "-"], stdin: Self.proposal()).status == 0)
        let before = try head()
        let out = try bash(#"exec "$1" edit p1 --device iphone --text "$(printf 'ok \377\376')" --db "$2""#)
        #expect(out.status == LedgerError.Code.invalidInput.exitStatus, "\(out.stderr)")
        #expect(out.stderr.contains("not valid UTF-8"))
        #expect(try head() == before)
    }

    @Test func proposeReadsProcessSubstitutionAndNamesTheOSReason() throws {
        let json = Self.proposal().replacingOccurrences(of: "'", with: "")
        let out = try bash(#""$1" propose <(printf '%s' '"# + json + #"') --db "$2""#)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try head() == 1)
        let missing = try ledger(["propose", dir.appendingPathComponent("nope.json").path])
        #expect(missing.status == LedgerError.Code.invalidInput.exitStatus)
        #expect(missing.stderr.contains("No such file or directory"), "\(missing.stderr)")
    }

    @Test func keygenChecksBothPathsBeforeWritingAnything() throws {
        let prefix = dir.appendingPathComponent("k").path
        try Data("taken\n".utf8).write(to: URL(fileURLWithPath: prefix + ".pub"))
        let out = try ledger(["keygen", "--out", prefix])
        #expect(out.status == LedgerError.Code.invalidInput.exitStatus)
        #expect(out.stderr.contains("k.pub already exists"))
        #expect(!FileManager.default.fileExists(atPath: prefix + ".key"))
    }

    @Test func auditOfADeviceNeverLinkedSaysSo() throws {
        #expect(try ledger(["devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "x", "--platform", "ios"]).status == 0)
        let ghost = try ledger(["audit", "device", "ghost", "--json"])
        #expect(ghost.status == LedgerError.Code.unknownDevice.exitStatus)
        #expect(ghost.stderr.contains("never linked"))
        #expect(try JSONParser.parse(ghost.stdout)["error"]?["code"] == .string("unknown_device"))
        #expect(try ledger(["audit", "device", "iphone"]).status == 0)
    }

    @Test func queriesOpenAStoreTheUserCannotWriteWithoutReadOnly() throws {
        #expect(try ledger(["propose", "-"], stdin: Self.proposal()).status == 0)
        // The data file is root's and read-only; the lock file stays shared (LMDB readers need it).
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: db)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: db + "-lock")
        let p = Process()
        // Root may write any file, so as root the query runs as nobody; anyone else already cannot write it.
        let query = [LedgerProcess.binary, "show", "p1", "--db", db]
        p.executableURL = URL(fileURLWithPath: getuid() == 0 ? "/usr/bin/setpriv" : query[0])
        p.arguments = getuid() == 0 ? ["--reuid=65534", "--regid=65534", "--clear-groups"] + query : Array(query.dropFirst())
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(text.hasPrefix("p1: Sasha"))
    }

    @Test func theShippedCLIHasNoStressWorkers() throws {
        let out = try ledger(["stress", "fill", "--count", "1000", "--unsafe-no-sync"])
        #expect(out.status != 0)
        #expect(try head() == 0)
        #expect(FileManager.default.isExecutableFile(atPath: LedgerProcess.stressBinary))
    }
}
