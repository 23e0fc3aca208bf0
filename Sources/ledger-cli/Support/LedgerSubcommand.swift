import ActionLedger
import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `ledger` subcommand: its work goes in `execute()`; `run()` turns a refusal into a
/// one-line message on stderr (and the JSON error on stdout with `--json`) and the
/// documented exit status of its code.
protocol LedgerSubcommand: ParsableCommand {
    var global: GlobalOptions { get }
    func execute() throws
}

extension LedgerSubcommand {
    func run() throws {
        do {
            try Arguments.checkUTF8()
            // Before any command opens the store, whichever way it opens it (verify, export and
            // backup open it themselves): its output must not be written over it.
            try StandardStreams.requireApart(from: global.path)
            try execute()
            try StandardStreams.flush()
        } catch let error as LedgerError {
            throw Output.fail(error, json: global.json)
        } catch let error as LMDBError {
            throw Output.fail(error.ledgerError(store: global.path), json: global.json)
        }
    }
}

enum Output {
    /// Prints `value` as JSON (indented when stdout is a terminal, one line otherwise).
    static func json(_ value: JSON) {
        print(isatty(1) != 0 ? value.pretty() : value.serialized())
    }

    /// One JSON value per line (JSONL).
    static func line(_ value: JSON) {
        print(value.serialized())
    }

    static func stderr(_ text: String) {
        stderrRaw(text + "\n")
    }

    /// Writes `text` to stderr as it is, with write(2): a stderr that cannot take it (a full
    /// disk, a closed pipe) loses the text and the command goes on to its exit status.
    /// (`FileHandle.write` traps on a failed write: with stdout and stderr both on a full
    /// disk, a command crashed with SIGILL instead of exiting `storage_error`.)
    static func stderrRaw(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            bytes = bytes.dropFirst(n)
        }
    }

    /// An error as stderr says it. The message may quote input (an id, a path): escaped like
    /// all human output.
    static func errorLine(_ error: LedgerError) -> String {
        "error: \(Human.escape(error.message)) [\(error.code.rawValue)]"
    }

    static func fail(_ error: LedgerError, json: Bool) -> ExitCode {
        stderr(errorLine(error))
        if json { line(error.json) }
        return ExitCode(error.code.exitStatus)
    }

    /// The most a `propose --batch` file may hold: its lines are one transaction's commands.
    static let batchLimit = 64 << 20

    /// Reads a whole file, or stdin for `-`, with read(2) until end of file: FIFOs and
    /// `<(…)` process substitution work (they have no size to ask for up front), and a
    /// failure names the OS reason. Past `limit` bytes it stops: a document is at most 1 MiB
    /// (`/dev/zero` had the process allocate until it was killed, and the abort was then
    /// reported as damage to the store).
    static func read(_ path: String, limit: Int = JSONParser.maxBytes) throws -> [UInt8] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LedgerError(.invalidInput, "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return bytes }
            if n < 0 {
                if errno == EINTR { continue }
                throw LedgerError(.invalidInput, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            guard bytes.count + n <= limit else {
                throw LedgerError(.invalidInput, "\(path == "-" ? "stdin" : path) is longer than \(limit) bytes, the most it may hold")
            }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }
}

enum Arguments {
    /// The store `arguments` name and whether they ask for JSON, read before ArgumentParser
    /// parses them, for what must hold before it writes anything (help, a usage error) or
    /// whatever it makes of them: `--db`, else `$LEDGER_DB`, else `ledger.lmdb`, as
    /// ``GlobalOptions/path`` resolves it. Options end at `--`; ArgumentParser takes the last `--db`.
    static func store(_ arguments: [String], _ environment: [String: String]) -> (path: String, json: Bool) {
        let options = arguments.prefix { $0 != "--" }
        var found: String?
        for (i, a) in zip(options.indices, options) {
            if a == "--db", i + 1 < options.endIndex { found = options[i + 1] }
            if a.hasPrefix("--db=") { found = String(a.dropFirst(5)) }
        }
        return (found ?? environment["LEDGER_DB"] ?? "ledger.lmdb", options.contains("--json"))
    }

    /// The options a command takes several times (lists); every other is given once.
    static let repeatable: Set<String> = ["--projection", "--origin", "--type", "--cors-origin", "--trusted-proxy"]
    /// The flags (no value: given twice, they say the same thing). A test keeps both sets in
    /// step with the commands' declarations.
    static let flags: Set<String> = ["--allow-remote", "--csv", "--deep", "--failed", "--follow", "--fresh", "--help", "--json",
                                     "--read-only", "--test-clock", "--user-verified", "--verify"]

    /// Refuses an option given twice: ArgumentParser keeps the last, so `approve --device
    /// phone … --device laptop` recorded the laptop, which the operator may not have meant.
    /// Options end at `--`.
    static func refuseRepeated(_ arguments: [String]) throws {
        var seen: Set<Substring> = []
        for a in arguments.dropFirst().prefix(while: { $0 != "--" }) where a.hasPrefix("--") {
            let name = a.split(separator: "=", maxSplits: 1).first ?? Substring(a)
            guard !repeatable.contains(String(name)), !flags.contains(String(name)) else { continue }
            guard seen.insert(name).inserted else {
                throw LedgerError(.invalidInput, "\(name) is given more than once: give it once",
                                  details: ["field": .string(String(name.dropFirst(2)))])
            }
        }
    }

    /// Refuses an argument that is not valid UTF-8. Swift's `CommandLine.arguments` would
    /// repair it to U+FFFD, and `edit --text` would then store a preview nobody wrote.
    static func checkUTF8() throws {
        for i in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[i] else { continue }
            if String(validatingCString: raw) == nil {
                throw LedgerError(.invalidInput, "argument \(i) is not valid UTF-8; it is refused, not repaired",
                                  details: ["argument": .number(Double(i))])
            }
        }
    }
}
