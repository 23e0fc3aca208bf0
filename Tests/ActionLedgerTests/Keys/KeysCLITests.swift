import Foundation
import Testing
@testable import ActionLedger

/// The CLI of device keys: keygen, keyed links, `statement`, and taps signed with `--key`
/// (swift-crypto) or `--proof` made by Python's `cryptography` as an independent signer.
@Suite struct KeysCLITests {
    /// The suite's store and scratch files, removed when the test's suite instance goes.
    let fixture: ProcessFixture
    var dir: URL { fixture.dir }
    var db: String { fixture.db }

    init() throws { fixture = try ProcessFixture("al-keys") }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    @discardableResult
    func ledger(_ args: String..., stdin: String? = nil) throws -> LedgerProcess.Output {
        try LedgerProcess.run(args + ["--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"], stdin: stdin)
    }

    func setUp() throws {
        #expect(try ledger("devices", "keygen", "--out", path("phone")).status == 0)
        #expect(try ledger("devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "iPhone",
                           "--platform", "ios", "--public-key", path("phone.pub"), "--key-protection", "user-verification").status == 0)
        #expect(try ledger("propose", "-", stdin: CLITests.proposalJSON).status == 0)
    }

    @Test func keygenWritesAPrivateKeyOnlyItsOwnerReadsAndNeverOverwrites() throws {
        let r = try ledger("devices", "keygen", "--out", path("k"), "--json")
        #expect(r.status == 0 && !r.stdout.contains("PRIVATE"))
        let mode = try FileManager.default.attributesOfItem(atPath: path("k.key"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try String(contentsOfFile: path("k.key"), encoding: .utf8).contains("BEGIN PRIVATE KEY"))
        let before = try Data(contentsOf: URL(fileURLWithPath: path("k.key")))
        try Data().write(to: URL(fileURLWithPath: path("j.pub")))
        #expect(try ledger("devices", "keygen", "--out", path("k")).status == 2)
        #expect(try ledger("devices", "keygen", "--out", path("j")).status == 2)
        #expect(!FileManager.default.fileExists(atPath: path("j.key")), "both paths are checked before writing")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("k.key"))) == before)
    }

    /// A key file that cannot be written in full (here a file-size limit of 0, as a full disk)
    /// is removed: a half-written `.key` had blocked every retry ("already exists").
    @Test func aKeyFileThatCannotBeWrittenIsNotLeftBehind() throws {
        for command in [["keygen"], ["devices", "keygen"]] {
            let out = path("full-\(command.count)")
            let shell = "trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\""
            let r = try Child("/bin/sh", ["-c", shell, LedgerProcess.binary] + command + ["--out", out]).finish(within: 60)
            #expect(r.status == 1 && r.stderr.contains("storage_error") && r.stderr.contains("nothing was kept"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out + ".key") && !FileManager.default.fileExists(atPath: out + ".pub"))
            #expect(try LedgerProcess.run(command + ["--out", out]).status == 0)
        }
    }

    @Test func keyedLinksFollowTheTrustRules() throws {
        try setUp()
        #expect(try ledger("devices", "keygen", "--out", path("lap")).status == 0)
        let link = ["devices", "link", "laptop", "--person", "quinn", "--label", "MBP", "--platform", "cli",
                    "--public-key", path("lap.pub")]
        var r = try LedgerProcess.run(link + ["--key-protection", "device", "--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
        #expect(r.status == 25 && r.stderr.contains("introduction_required"))
        r = try LedgerProcess.run(link + ["--key-protection", "user-verification", "--introduced-by", "iphone", "--key", path("phone.key"),
                                          "--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
        #expect(r.status == 2 && r.stderr.contains("cannot declare user-verification"))
        r = try LedgerProcess.run(link + ["--key-protection", "device", "--introduced-by", "iphone", "--key", path("lap.key"),
                                          "--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
        #expect(r.status == 26)
        r = try LedgerProcess.run(link + ["--key-protection", "device", "--introduced-by", "iphone", "--key", path("phone.key"),
                                          "--db", db, "--json"], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
        #expect(r.status == 0 && r.stdout.contains(#""trust":"introduced""#) && r.stdout.contains(#""introduced_by":"iphone""#))
    }

    @Test func tapsSignedWithKeyAndByAnIndependentSigner() throws {
        try setUp()
        var r = try ledger("review", "p1", "--device", "iphone")
        #expect(r.status == 27 && r.stderr.contains("proof_required"))
        // The CLI signs with --key.
        r = try ledger("review", "p1", "--device", "iphone", "--key", path("phone.key"), "--json")
        #expect(r.status == 0 && r.stdout.contains(#""level":"signed_uv""#))
        // Python's `cryptography` signs the statement `ledger statement` prints.
        let s = try ledger("statement", "p1", "--step", "approve", "--device", "iphone", "--command-id", "cmd-py",
                           "--claimed-at", "2026-11-22T08:59:00Z", "--json")
        #expect(s.status == 0)
        let hex = try #require(try JSONParser.parse(s.stdout)["statement_hex"]).stringValue
        let py = """
        import base64, sys
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), None)
        sig = key.sign(bytes.fromhex(sys.argv[2]), ec.ECDSA(hashes.SHA256()))
        print('{"format":"p256","signature":"%s"}' % base64.b64encode(sig).decode())
        """
        let signed = try IndependentVerifierTests.runPython(["-c", py, path("phone.key"), hex])
        #expect(signed.status == 0, "\(signed.stderr)")
        // Replayed under a new command id: refused.
        r = try ledger("approve", "p1", "--device", "iphone", "--proof", "-", "--claimed-at", "2026-11-22T08:59:00Z",
                       "--command-id", "cmd-other", stdin: signed.stdout)
        #expect(r.status == 26 && r.stderr.contains("bad_proof"))
        r = try ledger("approve", "p1", "--device", "iphone", "--proof", "-", "--claimed-at", "2026-11-22T08:59:00Z",
                       "--command-id", "cmd-py", "--json", stdin: signed.stdout)
        #expect(r.status == 0 && r.stdout.contains(#""claimed_at":"2026-11-22T08:59:00.000Z""#), "\(r.stderr)")
        #expect(try ledger("audit", "replay").status == 0)
        #expect(try ledger("verify", "--deep").status == 0)
    }

    @Test func statementPrintsTheBytesToSign() throws {
        try setUp()
        let s = try ledger("statement", "p1", "--step", "hold", "--device", "iphone", "--command-id", "cmd-h",
                           "--until", "2026-11-23T09:00:00Z", "--json")
        #expect(s.status == 0, "\(s.stderr)")
        let out = try JSONParser.parse(s.stdout)
        let l = try Ledger(path: db, options: Ledger.Options(readOnly: true))
        let expected = try l.statement(for: .hold(actionId: "p1", device: "iphone", until: at("2026-11-23T09:00:00Z")),
                                       commandId: "cmd-h", claimedAt: at("2026-11-22T09:00:00Z"))
        #expect(out["statement_hex"]?.stringValue == Hex.encode(expected.bytes))
        #expect(out["fields"]?["store"]?.stringValue == (try l.read { try $0.storeId() })?.hex)
        #expect(out["fields"]?["until"]?.stringValue == "2026-11-23T09:00:00.000Z")
        let plain = try ledger("statement", "p1", "--step", "hold", "--device", "iphone", "--command-id", "cmd-h",
                               "--until", "2026-11-23T09:00:00Z")
        #expect(plain.stdout == Hex.encode(expected.bytes) + "\n")
        // A parameter that does not go with the step is refused, as is a missing one.
        #expect(try ledger("statement", "p1", "--step", "review", "--device", "iphone", "--until", "2026-11-23T09:00:00Z").status == 2)
        #expect(try ledger("statement", "p1", "--step", "edit", "--device", "iphone").status == 2)
        #expect(try ledger("statement", "nope", "--step", "review", "--device", "iphone").status == 3)
        // A dismissal's reason is optional, as for `ledger dismiss`: none is the empty string's hash.
        let dismiss = try ledger("statement", "p1", "--step", "dismiss", "--device", "iphone", "--command-id", "cmd-d")
        let none = try l.statement(for: .dismiss(actionId: "p1", device: "iphone", reason: ""), commandId: "cmd-d",
                                   claimedAt: at("2026-11-22T09:00:00Z"))
        #expect(dismiss.status == 0 && dismiss.stdout == Hex.encode(none.bytes) + "\n", "\(dismiss.stderr)")
        #expect(try ledger("statement", "p1", "--step", "review", "--device", "iphone", "--reason", "x").status == 2)
    }
}

extension JSON {
    var stringValue: String { if case .string(let s) = self { s } else { "" } }
}
