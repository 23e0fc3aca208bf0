import Foundation

/// Runs the built `ledger` binary (it sits beside the test bundle in the build folder).
enum LedgerProcess {
    static var binary: String { built("ledger") }

    /// The test and measurement workers (Tests/LedgerStress), a binary of their own so the
    /// shipped `ledger` cannot append synthetic events.
    static var stressBinary: String { built("ledger-stress") }

    static func built(_ name: String) -> String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(name).path
    }

    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `ledger args…` to completion with `environment` added to ours.
    @discardableResult
    static func run(_ args: [String], environment: [String: String] = [:], stdin: String? = nil) throws -> Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let input = Pipe()
        p.standardInput = input
        try p.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read before waiting so a full pipe cannot deadlock the child.
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Output(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self))
    }

    /// Starts `ledger args…` without waiting.
    static func start(_ args: [String], environment: [String: String] = [:]) throws -> (Process, Pipe) {
        try start(binary: binary, args, environment: environment)
    }

    /// Starts `ledger-stress args…` (a worker: torture, contend, grow, read, fill) without waiting.
    static func startStress(_ args: [String], environment: [String: String] = [:]) throws -> (Process, Pipe) {
        try start(binary: stressBinary, args, environment: environment)
    }

    static func start(binary: String, _ args: [String], environment: [String: String]) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        return (p, out)
    }
}
