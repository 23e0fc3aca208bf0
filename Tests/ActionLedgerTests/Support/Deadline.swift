import Foundation

// Every child process and every polling loop of the tests has a deadline: a hang becomes a
// failure that says what hung, never a test run that waits forever.

/// A test step that did not finish in time (the child, if any, was killed).
struct Hung: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` until it holds; throws ``Hung`` naming `what` after `seconds`.
func waitUntil(_ what: @autoclosure () -> String, seconds: Double = 60, pollMicroseconds: UInt32 = 500,
               _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        guard Date() < deadline else { throw Hung(description: "still waiting after \(Int(seconds)) s for \(what())") }
        usleep(pollMicroseconds)
    }
}

/// Waits on a semaphore at most `seconds`; throws ``Hung`` naming `what` otherwise.
func wait(_ semaphore: DispatchSemaphore, _ what: @autoclosure () -> String, seconds: Double = 60) throws {
    guard semaphore.wait(timeout: .now() + seconds) == .success else {
        throw Hung(description: "still waiting after \(Int(seconds)) s for \(what())")
    }
}

/// A started child process. Its stdout and stderr are drained on threads of their own from
/// the start, so a child never blocks on a full pipe, and ``finish(within:)`` waits for it
/// with a deadline: a child still running then is killed and the test fails naming it.
final class Child: @unchecked Sendable {
    // Safe: `process` is only started and signalled; the buffers are behind locks.
    let process: Process
    let label: String
    private let stdoutData = Locked(Data()), stderrData = Locked(Data())
    private let drained = DispatchGroup()

    /// Starts `executable arguments…`; `stdin` (when given) is written and closed, otherwise
    /// the child's stdin is empty.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
         label: String? = nil) throws {
        self.label = label ?? ([URL(fileURLWithPath: executable).lastPathComponent] + arguments).joined(separator: " ")
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        for (pipe, buffer) in [(out, stdoutData), (err, stderrData)] {
            drained.enter()
            Thread { [drained] in
                while true {
                    let chunk = pipe.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    buffer.update { $0.append(chunk) }
                }
                drained.leave()
            }.start()
        }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    /// What the child has written to stdout so far.
    var stdoutSoFar: String { String(decoding: stdoutData.value, as: UTF8.self) }

    func kill(_ signal: Int32 = SIGKILL) {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
    }

    /// Waits until the child has exited and its output is read, at most `seconds`. A child
    /// still running then is killed, and ``Hung`` names it with what it wrote so far.
    @discardableResult
    func finish(within seconds: Double = 120) throws -> LedgerProcess.Output {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(1000) }
        if process.isRunning {
            kill()
            process.waitUntilExit()
            _ = drained.wait(timeout: .now() + 10)
            throw Hung(description: "`\(label)` still running after \(Int(seconds)) s: killed. "
                + "stdout so far: \(stdoutSoFar.suffix(2000)) stderr: \(String(decoding: stderrData.value, as: UTF8.self).suffix(2000))")
        }
        process.waitUntilExit()
        // The pipes close when the child exits (ours spawn no grandchildren that keep them).
        guard drained.wait(timeout: .now() + 10) == .success else {
            throw Hung(description: "`\(label)` exited but its output pipes stayed open for 10 s")
        }
        return LedgerProcess.Output(status: process.terminationStatus, stdout: stdoutSoFar,
                                    stderr: String(decoding: stderrData.value, as: UTF8.self),
                                    signalled: process.terminationReason == .uncaughtSignal)
    }
}

/// Waits for several children with one deadline for all; on a hang every child still
/// running is killed and the error names them.
func finishAll(_ children: [Child], within seconds: Double = 120) throws -> [LedgerProcess.Output] {
    let deadline = Date().addingTimeInterval(seconds)
    while children.contains(where: \.isRunning), Date() < deadline { usleep(1000) }
    let hung = children.filter(\.isRunning)
    if !hung.isEmpty {
        for c in children { c.kill() }
        throw Hung(description: "still running after \(Int(seconds)) s, killed: " + hung.map { "`\($0.label)`" }.joined(separator: ", "))
    }
    return try children.map { try $0.finish(within: 10) }
}
