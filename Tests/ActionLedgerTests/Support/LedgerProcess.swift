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
        /// Ended by a signal (`status` is then the signal number), not by exiting.
        var signalled = false
    }

    /// Runs `ledger args…` to completion with `environment` added to ours. A command still
    /// running after `timeout` seconds is killed and the test fails naming it.
    @discardableResult
    static func run(_ args: [String], environment: [String: String] = [:], stdin: String? = nil,
                    timeout: Double = 120) throws -> Output {
        try Child(binary, args, environment: environment, stdin: stdin, label: (["ledger"] + args).joined(separator: " "))
            .finish(within: timeout)
    }

    /// Starts `ledger args…` without waiting; finish it with ``Child/finish(within:)``.
    static func start(_ args: [String], environment: [String: String] = [:]) throws -> Child {
        try Child(binary, args, environment: environment, label: (["ledger"] + args).joined(separator: " "))
    }

    /// Starts `ledger-stress args…` (a test worker: torture, contend, grow, read, fill),
    /// which is built for the tests and never shipped in `ledger`.
    static func startStress(_ args: [String], environment: [String: String] = [:]) throws -> Child {
        try Child(stressBinary, args, environment: environment, label: (["ledger-stress"] + args).joined(separator: " "))
    }
}
