import Foundation
import Testing
@testable import ActionLedger

/// Auditor mode and hostile input through the `ledger` binary: refusals leave the store
/// byte-for-byte unchanged.
@Suite(.serialized) struct ReadOnlyAndCLITests {
    typealias F = IntegrityFixtures

    func populatedStore() throws -> ProcessFixture {
        let f = try ProcessFixture("ro")
        try f.withLedger { try F.populate($0) }
        return f
    }

    /// Read-only queries, and write commands that must be refused with `--read-only`.
    static let queries: [[String]] = [["verify"], ["verify", "--deep"], ["export"], ["log"], ["show", "a1"], ["devices", "list"]]
    static let writes: [[String]] = [["approve", "a1", "--device", "iphone"], ["import", "x.jsonl"],
                                     ["devices", "link", "d9", "--person", "quinn", "--label", "x", "--platform", "ios"],
                                     ["propose", "-"], ["policy", "set", "-", "--org", "quinn-co"]]

    @Test func readOnlyQueriesLeaveTheDataFileIdenticalAndWritesAreRefused() throws {
        let f = try populatedStore()
        // As root, permissions do not stop writes: chmod documents intent; MDB_RDONLY and
        // unchanged bytes are what prove nothing was written.
        chmod(f.db, 0o444)
        let before = try F.fileDigest(f.db)
        for q in Self.queries {
            let r = try f.ledger(q + ["--read-only"])
            #expect(r.status == 0, "\(q): \(r.stderr)")
        }
        for w in Self.writes {
            let r = try f.ledger(w + ["--read-only"], stdin: w[0] == "propose" ? HostileInputTests.proposalDoc.serialized() : "{}")
            #expect(r.status == LedgerError.Code.readOnly.exitStatus, "\(w): \(r.status) \(r.stderr)")
        }
        #expect(try F.fileDigest(f.db) == before)
    }

    /// Runs as a user who cannot write the copy: `nobody` (through `setpriv`) when the tests
    /// run as root, whom permissions do not stop; otherwise the test's own (non-root) user.
    /// It never skips: a missing `setpriv`, or a binary `nobody` cannot run, fails it.
    @Test func readOnlyWorksOnFilesANonRootUserCannotWrite() throws {
        let f = try populatedStore()
        // A copy as on read-only media: no lock file, directory and file not writable by `nobody`.
        let media = f.path("media")
        try FileManager.default.createDirectory(atPath: media, withIntermediateDirectories: true)
        let copy = media + "/copy.lmdb"
        #expect(try f.ledger(["backup", copy]).status == 0)
        try? FileManager.default.removeItem(atPath: copy + "-lock")
        chmod(copy, 0o444)
        chmod(media, 0o555)
        chmod(f.dir.path, 0o755)
        let before = try F.fileDigest(copy)
        let asRoot = getuid() == 0
        var binary = LedgerProcess.binary
        /// `command…` as the unprivileged user.
        func unprivileged(_ command: [String]) throws -> LedgerProcess.Output {
            guard asRoot else { return try Child(command[0], Array(command.dropFirst())).finish(within: 120) }
            return try Child("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + command,
                             label: "setpriv (as nobody) " + command.joined(separator: " ")).finish(within: 120)
        }
        if asRoot {
            try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                         "running as root, the test needs /usr/bin/setpriv (util-linux) to act as `nobody`")
            // A build folder `nobody` cannot reach (a clone under /root): run a copy of the binary
            // from the fixture's directory instead.
            if try unprivileged(["/usr/bin/test", "-x", binary]).status != 0 {
                try FileManager.default.createDirectory(atPath: f.path("bin"), withIntermediateDirectories: true)
                binary = f.path("bin/ledger")
                try FileManager.default.copyItem(atPath: LedgerProcess.binary, toPath: binary)
                chmod(binary, 0o755)
            }
            let probe = try unprivileged([binary, "--help"])
            try #require(probe.status == 0, "`nobody` cannot run \(binary): \(probe.status) \(probe.stderr)")
        }
        // The premise: this user cannot write the copy or create its lock file.
        let premise = try unprivileged(["/usr/bin/test", "-w", copy, "-o", "-w", media])
        try #require(premise.status == 1, "the unprivileged user can write \(copy) or its directory")
        for q in Self.queries {
            let r = try unprivileged([binary] + q + ["--read-only", "--db", copy])
            #expect(r.status == 0, "\(q) unprivileged: \(r.stderr)")
        }
        let write = try unprivileged([binary, "approve", "a1", "--device", "iphone", "--db", copy])
        #expect(write.status != 0 && !write.signalled, "a write by a user who cannot write the file: \(write.status) \(write.stderr)")
        #expect(try F.fileDigest(copy) == before)
        #expect(!FileManager.default.fileExists(atPath: copy + "-lock"))
    }

    /// `import` makes a store only from events, and only where nothing is (or in an empty
    /// store): an empty export, or an empty file or directory at the path, is refused and
    /// nothing is created or touched.
    @Test func importRefusesAnEmptyExportAndAPathThatHoldsNoStore() throws {
        let f = try populatedStore()
        let empty = f.path("empty.jsonl")
        try Data().write(to: URL(fileURLWithPath: empty))
        let none = try f.ledger(["import", empty, "--json"], db: f.path("new.lmdb"))
        #expect(none.status == 2 && none.stdout.contains("no events"), "\(none.stdout)")
        #expect(!FileManager.default.fileExists(atPath: f.path("new.lmdb")))
        // Both verifiers refuse it too: never "ok, 0 events" for what a failed export leaves.
        let verified = try f.ledger(["verify", "--export", empty, "--json"])
        #expect(verified.status == 2 && verified.stdout.contains("no events"), "\(verified.stdout)")
        let independent = try IndependentVerifierTests.runPython([IndependentVerifierTests.script, empty])
        #expect(independent.status == 1 && independent.stdout.contains("no events"), "\(independent.stdout)")
        var export: [UInt8] = []
        _ = try f.withLedger { l in try l.exportJSONL { export += $0 } }
        let file = f.path("export.jsonl")
        try Data(export).write(to: URL(fileURLWithPath: file))
        let emptyFile = f.path("empty.lmdb"), directory = f.path("dir.lmdb")
        try Data().write(to: URL(fileURLWithPath: emptyFile))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for path in [emptyFile, directory] {
            let r = try f.ledger(["import", file], db: path)
            #expect(r.status == 2 && r.stderr.contains("is not a store"), "\(path): \(r.stderr)")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: emptyFile)[.size] as? Int == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect(try f.ledger(["import", file], db: f.path("restored.lmdb")).status == 0)
    }

    @Test func hostileInputThroughTheCLIIsRefusedAndWritesNothing() throws {
        let f = try populatedStore()
        try f.withLedger { $0.environment }.sync()
        let before = try F.fileDigest(f.db)
        var rng = SeededRandom(seed: 77)
        var m = JSONMutator(rng: SeededRandom(seed: 78))
        let proposal = Array(HostileInputTests.proposalDoc.serialized().utf8)
        let policy = Array(HostileInputTests.policy.serialized().utf8)
        var exportText: [UInt8] = []
        _ = try f.withLedger { l in try l.exportJSONL { exportText += $0 } }
        var exportLines = exportText.split(separator: 0x0A).map(Array.init)
        for i in 0..<16 {
            // Byte-level damage that never yields valid input: truncation or invalid UTF-8.
            func damage(_ b: [UInt8]) -> [UInt8] {
                i % 2 == 0 ? Array(b.prefix(1 + rng.int(b.count - 2))) : { var c = b; c.insert(0xFF, at: 1 + rng.int(b.count - 1)); return c }()
            }
            // Through files, not a String: invalid UTF-8 must reach the parser as bytes.
            let singleFile = f.path("single-\(i).json"), policyFile = f.path("policy-\(i).json")
            try Data(damage(proposal)).write(to: URL(fileURLWithPath: singleFile))
            try Data(damage(policy)).write(to: URL(fileURLWithPath: policyFile))
            let single = try f.ledger(["propose", singleFile, "--json"])
            #expect(single.status == 2 && single.stdout.contains("invalid_input"), "propose #\(i): \(single.stderr)")
            let batchFile = f.path("batch-\(i).jsonl")
            var batch = Array(repeating: proposal, count: 3)
            let bad = rng.int(3)
            batch[bad] = Array(JSONMutator.set(HostileInputTests.proposalDoc, ["confidence"], [1.5, -1, "x", .null][i % 4]).serialized().utf8)
            try Data(batch.flatMap { $0 + [0x0A] }).write(to: URL(fileURLWithPath: batchFile))
            let b = try f.ledger(["propose", "--batch", batchFile, "--json"])
            #expect(b.status == 2 && b.stdout.contains("\"line\":\(bad + 1)") && b.stdout.contains("confidence"), "batch #\(i): \(b.stdout)")
            let p = try f.ledger(["policy", "set", policyFile, "--org", "quinn-co"])
            #expect(p.status == 2, "policy #\(i): \(p.stderr)")
            let k = rng.int(exportLines.count)
            let saved = exportLines[k]
            exportLines[k] = m.bytes(saved)
            let importFile = f.path("import-\(i).jsonl")
            try Data(exportLines.flatMap { $0 + [0x0A] }).write(to: URL(fileURLWithPath: importFile))
            exportLines[k] = saved
            let fresh = f.path("fresh-\(i).lmdb")
            let imp = try f.ledger(["import", importFile, "--json"], db: fresh)
            #expect(imp.status == 2 && imp.stdout.contains("\"line\":\(k + 1)"), "import #\(i) line \(k + 1): \(imp.stdout)")
            #expect(try Ledger(path: fresh).read { try $0.head() } == .empty)
            #expect(try f.ledger(["import", importFile]).status == LedgerError.Code.notEmpty.exitStatus)
        }
        // A well-formed batch the engine refuses (its second item re-proposes a1) is all or
        // nothing too, down to the bytes.
        let fresh = JSONMutator.set(HostileInputTests.proposalDoc, ["command_id"], nil)
        let dup = JSONMutator.set(fresh, ["action_id"], "a1")
        let dupFile = f.path("dup.jsonl")
        try Data((fresh.serialized() + "\n" + dup.serialized() + "\n").utf8).write(to: URL(fileURLWithPath: dupFile))
        let refused = try f.ledger(["propose", "--batch", dupFile, "--json"])
        #expect(refused.status == LedgerError.Code.duplicateAction.exitStatus && refused.stdout.contains("\"line\":2"), "\(refused.stdout)")
        #expect(try f.ledger(["approve", "a1", "--device", "iphone"]).status == LedgerError.Code.alreadyDecided.exitStatus)
        #expect(try F.fileDigest(f.db) == before, "refused input changed the store")
    }
}
