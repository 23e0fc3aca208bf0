import Foundation
@testable import ActionLedger

/// A temporary directory for tests that run `ledger` processes on one store.
final class ProcessFixture {
    let dir: URL
    let db: String

    init(_ name: String = "p") throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        db = dir.appendingPathComponent("l.lmdb").path
        try createTestClockStore(at: db)
    }

    deinit {
        chmod(dir.path, 0o755)
        try? FileManager.default.removeItem(at: dir)
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Runs `ledger args… --db DB` (unless the args name a db) with a fixed clock.
    @discardableResult
    func ledger(_ args: [String], db: String? = nil, stdin: String? = nil) throws -> LedgerProcess.Output {
        try LedgerProcess.run(args + ["--db", db ?? self.db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"], stdin: stdin)
    }

    /// Opens the store in this process for set-up, runs `body`, and closes it again.
    func withLedger<T>(_ options: Ledger.Options = Ledger.Options(), _ body: (Ledger) throws -> T) throws -> T {
        let l = try Ledger(path: db, options: options)
        return try body(l)
    }

    /// Waits for several started children (all within `seconds`, or the test fails naming
    /// the ones still running, which are killed), reading their whole output.
    static func collect(_ children: [Child], within seconds: Double = 300) throws -> [LedgerProcess.Output] {
        try finishAll(children, within: seconds)
    }
}
