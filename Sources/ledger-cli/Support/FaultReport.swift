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
/// same way, so the message says both; `verify --deep` tells them apart. A signal another
/// process sent (`kill -ABRT`, a supervisor's watchdog) is no fault: it takes its default
/// action, as it would have without the handler.
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
    private static let status = LedgerError.Code.integrityFailure.exitStatus
    nonisolated(unsafe) private static var pid: pid_t = 0

    /// Installs the handler for `arguments` (the store is `--db`, else `$LEDGER_DB`, else
    /// `ledger.lmdb`). Not in `verify`'s scanning child, whose fault its parent reports, nor
    /// when the Swift backtracer is asked for explicitly (`SWIFT_BACKTRACE=enable=yes`).
    static func install(arguments: [String], environment: [String: String]) {
        if environment["LEDGER_VERIFY_CHILD"] != nil || environment["SWIFT_BACKTRACE"]?.contains("enable=yes") == true { return }
        let (path, json) = Arguments.store(arguments, environment)
        pid = getpid()
        for (i, (signal, name)) in signals.enumerated() {
            let error = LedgerError(.integrityFailure, "the process stopped on \(name) reading \(path): liblmdb trusts every page of "
                + "the file, so a damaged page ends a process this way (or ledger has a defect); `ledger verify --deep --db "
                + "\(shellQuoted(path))` reads every page apart and names the damage",
                details: ["problem": "unreadable_page", "signal": .number(Double(signal))])
            // The JSON starts on a line of its own: the fault may cut a line the command was writing.
            reports[i] = Report(signal: signal, stderr: buffer(Output.errorLine(error) + "\n"),
                                stdout: buffer(json ? "\n" + error.json.serialized() + "\n" : ""))
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { signal, info, _ in
                // Only write, signal, raise and _exit here: each is async-signal-safe.
                if let info, info.pointee.si_code <= 0, info.pointee._sifields._kill.si_pid != FaultReport.pid {
                    // Sent by another process: raised again under its default action, which
                    // takes it once this handler returns (it is blocked until then).
                    Glibc.signal(signal, SIG_DFL)
                    raise(signal)
                    return
                }
                for i in 0..<3 where FaultReport.reports[i].signal == signal {
                    let r = FaultReport.reports[i]
                    _ = write(2, r.stderr.baseAddress, r.stderr.count)
                    if r.stdout.count > 0 { _ = write(1, r.stdout.baseAddress, r.stdout.count) }
                }
                _exit(FaultReport.status)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_SIGINFO
            sigaction(signal, &action, nil)
        }
    }

    /// `path` as a shell word, so the suggested command can be pasted: in single quotes when
    /// it needs quoting and holds none (a backslash escape would print doubled: human
    /// output escapes backslashes).
    private static func shellQuoted(_ path: String) -> String {
        let plain = path.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || "._/-+".utf8.contains(c)
        }
        return plain || path.contains("'") ? path : "'" + path + "'"
    }

    private static func buffer(_ text: String) -> UnsafeMutableBufferPointer<UInt8> {
        let bytes = Array(text.utf8)
        let b = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = b.initialize(from: bytes)
        return b
    }
}
