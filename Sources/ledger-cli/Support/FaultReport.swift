import ActionLedger
import Foundation

/// Turns a fault while reading a store into the CLI's error for a damaged store.
///
/// liblmdb checks no page: a damaged B-tree page can send it outside the map (SIGSEGV,
/// SIGBUS) or into one of its assertions (SIGABRT), and the process dies with a crash dump
/// that names no store and no remedy. `verify` scans in a child and reports such a page
/// (`unreadable_page`); every other command now ends the same way, as `integrity_failure`
/// with `problem: unreadable_page`, its JSON on stdout under `--json`, pointing at
/// `verify --deep`. Nothing can be recovered in the process: the handler writes the error,
/// prepared before any store is opened, and exits. A defect of the process's own faults the
/// same way, so the message says both; `verify --deep` tells them apart.
enum FaultReport {
    /// A signal's prepared error: plain pointers, so the handler counts no reference.
    private struct Report {
        var signal: Int32
        var stderr: UnsafeMutableBufferPointer<UInt8>
        var stdout: UnsafeMutableBufferPointer<UInt8>
    }

    private static let signals = [(SIGSEGV, "SIGSEGV"), (SIGBUS, "SIGBUS"), (SIGABRT, "SIGABRT")]
    // Written once at start, before any other thread runs, then only read, by the handler.
    nonisolated(unsafe) private static var reports = UnsafeMutablePointer<Report>.allocate(capacity: 3)
    nonisolated(unsafe) private static var status: Int32 = 1

    /// Installs the handler for `arguments` (the store is `--db`, else `$LEDGER_DB`, else
    /// `ledger.lmdb`). Not in `verify`'s scanning child, whose fault its parent reports, nor
    /// when the Swift backtracer is asked for explicitly (`SWIFT_BACKTRACE=enable=yes`).
    static func install(arguments: [String], environment: [String: String]) {
        if environment["LEDGER_VERIFY_CHILD"] != nil || environment["SWIFT_BACKTRACE"]?.contains("enable=yes") == true { return }
        let path = store(arguments) ?? environment["LEDGER_DB"] ?? "ledger.lmdb"
        let json = arguments.contains("--json")
        status = LedgerError.Code.integrityFailure.exitStatus
        for (i, (signal, name)) in signals.enumerated() {
            let error = LedgerError(.integrityFailure, "the process stopped on \(name) reading \(path): liblmdb trusts every page of "
                + "the file, so a damaged page ends a process this way (or ledger has a defect); `ledger verify --deep --db "
                + "\(path)` reads every page apart and names the damage", details: ["problem": "unreadable_page",
                                                                                   "signal": .number(Double(signal))])
            reports[i] = Report(signal: signal, stderr: buffer("error: \(Human.escape(error.message)) [\(error.code.rawValue)]\n"),
                                stdout: buffer(json ? error.json.serialized() + "\n" : ""))
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                // Only write(2) and _exit(2) here: both are async-signal-safe.
                for i in 0..<3 where FaultReport.reports[i].signal == signal {
                    let r = FaultReport.reports[i]
                    _ = write(2, r.stderr.baseAddress, r.stderr.count)
                    if r.stdout.count > 0 { _ = write(1, r.stdout.baseAddress, r.stdout.count) }
                }
                _exit(FaultReport.status)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_ONSTACK
            sigaction(signal, &action, nil)
        }
        // A fault from a stack overflow could not run the handler on the faulting stack.
        var stack = stack_t()
        stack.ss_size = 64 << 10
        stack.ss_sp = UnsafeMutableRawPointer.allocate(byteCount: stack.ss_size, alignment: 16)
        sigaltstack(&stack, nil)
    }

    /// `--db PATH` or `--db=PATH` among `arguments`.
    private static func store(_ arguments: [String]) -> String? {
        for (i, a) in arguments.enumerated() {
            if a == "--db", i + 1 < arguments.count { return arguments[i + 1] }
            if a.hasPrefix("--db=") { return String(a.dropFirst(5)) }
        }
        return nil
    }

    private static func buffer(_ text: String) -> UnsafeMutableBufferPointer<UInt8> {
        let bytes = Array(text.utf8)
        let b = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = b.initialize(from: bytes)
        return b
    }
}
