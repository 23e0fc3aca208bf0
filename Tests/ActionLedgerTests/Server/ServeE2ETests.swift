import Foundation
import Testing

/// Tests/e2e/serve_e2e.py against the built `ledger`: the real `ledger serve` process driven
/// over HTTP from Python through issue 14's cross-device story. It needs python3 with
/// `cryptography` (`.ci/run` and `make test` install it) and fails, never skips, without.
@Suite struct ServeE2ETests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("e2e/serve_e2e.py").path

    @Test func crossDeviceStoryOverHTTP() throws {
        let r = try Child("/usr/bin/env", ["python3", Self.script, "--ledger", LedgerProcess.binary]).finish(within: 120)
        #expect(r.status == 0 && !r.signalled, "serve_e2e.py failed:\n\(r.stdout)\n\(r.stderr)")
    }
}
