import ActionLedger
import ArgumentParser
import Foundation

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
            try execute()
        } catch let error as LedgerError {
            throw Output.fail(error, json: global.json)
        } catch let error as LMDBError {
            throw Output.fail(LedgerError(.storage, error.description), json: global.json)
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
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func fail(_ error: LedgerError, json: Bool) -> ExitCode {
        stderr("error: \(error.message) [\(error.code.rawValue)]")
        if json { line(error.json) }
        return ExitCode(error.code.exitStatus)
    }

    /// Reads a whole file, or stdin for `-`.
    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LedgerError(.invalidInput, "cannot read \(path)")
        }
        return Array(data)
    }
}
