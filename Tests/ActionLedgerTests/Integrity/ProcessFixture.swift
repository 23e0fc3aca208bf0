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

    /// Waits for several started children, reading their whole stdout.
    static func collect(_ children: [(Process, Pipe)]) -> [(status: Int32, stdout: String)] {
        // Read every pipe on its own thread so that no child blocks on a full pipe.
        let results = ResultBox(count: children.count)
        DispatchQueue.concurrentPerform(iterations: children.count) { i in
            let data = children[i].1.fileHandleForReading.readDataToEndOfFile()
            children[i].0.waitUntilExit()
            results.set(i, (children[i].0.terminationStatus, String(decoding: data, as: UTF8.self)))
        }
        return results.values.map { $0! }
    }
}

/// Results written by concurrent readers, one slot each.
final class ResultBox: @unchecked Sendable {
    // Safe: each index is written by exactly one thread, under `lock`, and read after all joined.
    private let lock = NSLock()
    private(set) var values: [(status: Int32, stdout: String)?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ v: (Int32, String)) {
        lock.lock()
        values[i] = v
        lock.unlock()
    }
}
