import Foundation

/// Runs the built `ledger` binary (it sits beside the test bundle in the build folder).
enum LedgerProcess {
    static var binary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("ledger").path
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
}
