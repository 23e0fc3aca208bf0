import Foundation
import Testing
@testable import ActionLedger

@Suite struct EnvironmentTests {
    func withEnv(_ options: Environment.Options = .init(), _ body: (Environment, String) throws -> Void) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("t.lmdb").path
        try body(try Environment(path: path, options: options), path)
    }

    /// Every database the file holds is opened when the environment opens, before any
    /// concurrent transaction could race another's `mdb_dbi_open`; and readers on many
    /// threads then find the handles cached, the data each database's own.
    @Test func existingDatabasesAreOpenedAtOpenAndSharedByConcurrentReaders() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("t.lmdb").path
        // Written and closed: a handle open meanwhile would be shared, its handles cached.
        try Environment(path: path).write { txn in
            for i in 0..<24 {
                let db = try txn.openDatabase("d\(i)", duplicates: i % 2 == 1)!
                try txn.put(db, key: Array("k".utf8), value: Array("v\(i)".utf8))
            }
        }
        do {
            let reopened = try Environment(path: path)
            #expect((0..<24).allSatisfy { reopened.handles["d\($0)"] != nil })
            DispatchQueue.concurrentPerform(iterations: 48) { n in
                let i = n % 24
                let value = try? reopened.read { txn in try txn.get(txn.openDatabase("d\(i)", create: false)!, key: Array("k".utf8)) }
                #expect(value == Array("v\(i)".utf8))
            }
        }
    }

    @Test func writeCommitsAndThrowAborts() throws {
        try withEnv { env, _ throws in
            let db = try env.write { try $0.openDatabase("d")! }
            try env.write { try $0.put(db, key: Array("a".utf8), value: Array("1".utf8)) }
            struct Boom: Error {}
            #expect(throws: Boom.self) {
                try env.write { txn throws in
                    try txn.put(db, key: Array("b".utf8), value: Array("2".utf8))
                    throw Boom()
                }
            }
            try env.read { txn throws in
                #expect(try txn.get(db, key: Array("a".utf8)) == Array("1".utf8))
                #expect(try txn.get(db, key: Array("b".utf8)) == nil)
            }
        }
    }

    @Test func nestedTransactionRollsBackAlone() throws {
        try withEnv { env, _ throws in
            let db = try env.write { try $0.openDatabase("d")! }
            try env.write { txn throws in
                try txn.put(db, key: [1], value: [1])
                struct Refused: Error {}
                _ = try? txn.nested { child in
                    try child.put(db, key: [2], value: [2])
                    throw Refused()
                }
                try txn.nested { child in try child.put(db, key: [3], value: [3]) }
            }
            try env.read { txn throws in
                #expect(try txn.get(db, key: [1]) == [1])
                #expect(try txn.get(db, key: [2]) == nil)
                #expect(try txn.get(db, key: [3]) == [3])
            }
        }
    }

    @Test func mapGrowsWhenFull() throws {
        var options = Environment.Options()
        options.mapSize = 64 << 10
        try withEnv(options) { env, _ throws in
            let db = try env.write { try $0.openDatabase("d")! }
            let before = env.mapSize
            let value = [UInt8](repeating: 7, count: 4000)
            for i in 0..<200 {
                try env.write { try $0.put(db, key: Keys.u64(UInt64(i)), value: value) }
            }
            #expect(env.mapSize > before)
            try env.read { txn throws in
                #expect(try txn.count(db) == 200)
                #expect(try txn.get(db, key: Keys.u64(199)) == value)
            }
        }
    }

    /// A new open maps the file at the size the process that grew it recorded: opened at the
    /// size of its data only, its first write past that data failed `MDB_MAP_FULL` and ran twice.
    @Test func aNewOpenAdoptsTheMapSizeTheFileRecords() throws {
        var options = Environment.Options()
        options.mapSize = 64 << 10
        options.unsafeNoSync = true  // a scratch file: only the map's size is under test
        try withEnv(options) { _, path throws in
            let grown: Int
            do {
                // Another handle on a file of its own (withEnv's is open on this path).
                let env = try Environment(path: path + "-2", options: options)
                let db = try env.write { try $0.openDatabase("d")! }
                for i in 0..<200 { try env.write { try $0.put(db, key: Keys.u64(UInt64(i)), value: [UInt8](repeating: 7, count: 4000)) } }
                grown = env.mapSize
            }
            #expect(grown >= 1 << 20)
            let again = try Environment(path: path + "-2", options: options)
            #expect(again.mapSize == grown)
            let db = try again.write { try $0.openDatabase("d", create: false)! }
            let begun = again.writeTransactionsBegun
            try again.write { try $0.put(db, key: Keys.u64(1_000), value: [UInt8](repeating: 8, count: 16 << 10)) }
            #expect(again.writeTransactionsBegun == begun + 1, "the write ran \(again.writeTransactionsBegun - begun) times")
        }
    }

    @Test func appendRefusesAnOutOfOrderKey() throws {
        try withEnv { env, _ throws in
            let db = try env.write { try $0.openDatabase("d")! }
            try env.write { try $0.put(db, key: Keys.u64(5), value: [1], flags: .append) }
            #expect {
                try env.write { try $0.put(db, key: Keys.u64(3), value: [1], flags: .append) }
            } throws: { ($0 as? LMDBError)?.code == LMDBError.keyExists }
        }
    }

    @Test func noOverwriteKeepsTheStoredValueAndPlainPutReplacesIt() throws {
        try withEnv { env, _ throws in
            let db = try env.write { try $0.openDatabase("d")! }
            try env.write { try $0.put(db, key: [7], value: [1], flags: .noOverwrite) }
            #expect {
                try env.write { try $0.put(db, key: [7], value: [2], flags: [.noOverwrite, .append]) }
            } throws: { ($0 as? LMDBError)?.code == LMDBError.keyExists }
            #expect(try env.read { try $0.get(db, key: [7]) } == [1])
            try env.write { try $0.put(db, key: [7], value: [3]) }
            #expect(try env.read { try $0.get(db, key: [7]) } == [3])
        }
    }

    @Test func errorsCarryLMDBCodeAndText() throws {
        let error = try #require(throws: LMDBError.self) {
            try Environment(path: "/nonexistent-dir/x.lmdb")
        }
        #expect(error.code == ENOENT)
        #expect(error.message.contains("No such file"))
    }

    @Test func scanWalksInKeyOrderBothWays() throws {
        try withEnv { env, _ throws in
            let db = try env.write { try $0.openDatabase("d")! }
            try env.write { txn in for k: UInt64 in [3, 1, 2, 10] { try txn.put(db, key: Keys.u64(k), value: [UInt8(k)]) } }
            var forward: [UInt64] = [], backward: [UInt64] = []
            try env.read { txn throws in
                try txn.scan(db, from: Keys.u64(2)) { k, _ in forward.append(Keys.readU64(k)); return true }
                try txn.scan(db, from: Keys.u64(4), reverse: true) { k, _ in backward.append(Keys.readU64(k)); return true }
            }
            #expect(forward == [2, 3, 10])
            #expect(backward == [3, 2, 1])
        }
    }

    /// A write begun inside a read this thread holds on the same store cannot grow the map
    /// (that waits for every transaction of the process, the read included): it fails with
    /// `EDEADLK` instead of waiting for ever, the read's body runs once, and once the read
    /// ends the same write grows the map.
    @Test func aWriteInsideAReadThatMustGrowTheMapFailsInsteadOfHanging() throws {
        var options = Environment.Options()
        options.mapSize = 64 << 10
        options.unsafeNoSync = true  // a scratch file: only the map's growth is under test
        try withEnv(options) { env, path throws in
            let db = try env.write { try $0.openDatabase("d")! }
            let big = [UInt8](repeating: 1, count: 256 << 10)
            let second = try Environment(path: path, options: options)  // another handle, the same environment
            let outcome = Locked<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            let runs = Locked(0)
            let worker = Thread {
                do {
                    try env.read { _ in
                        runs.update { $0 += 1 }
                        try second.write { try $0.put(db, key: Array("k".utf8), value: big) }
                    }
                    outcome.update { $0 = "committed" }
                } catch let e as LMDBError {
                    outcome.update { $0 = e.code == EDEADLK ? e.description : "other: \(e)" }
                } catch { outcome.update { $0 = "other: \(error)" } }
                done.signal()
            }
            worker.start()
            // Without the refusal the worker waits for ever: fail rather than hang the suite.
            #expect(done.wait(timeout: .now() + 60) == .success, "the write inside the read hung")
            let said = try #require(outcome.value)
            #expect(said.contains("another transaction open on the store"), "\(said)")
            #expect(runs.value == 1 && env.mapSize == 64 << 10)
            try second.write { try $0.put(db, key: Array("k".utf8), value: big) }
            #expect(try env.read { try $0.get(db, key: Array("k".utf8)) }?.count == big.count)
            #expect(env.mapSize > 256 << 10)
        }
    }
}
