import Foundation
import Testing
@testable import ActionLedger

/// Keyed links and signed taps survive export, the independent verifier and import.
@Suite struct SignedExportTests {
    @Test func anExportWithKeysAndProofsVerifiesAndImports() throws {
        let t = try keyedStore(stakes: .high)
        let phone = TestDeviceKey(), laptop = TestDeviceKey()
        try t.ledger.linkKeyed("iphone", phone, protection: .userVerification)
        try t.ledger.linkKeyed("laptop", laptop, platform: .cli, introducer: ("iphone", phone))
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "laptop"), laptop)
        try t.ledger.signed(.hold(actionId: "a1", device: "iphone", until: t0.adding(milliseconds: 60_000)), phone)
        try t.ledger.signed(.edit(actionId: "a1", device: "iphone", text: "Changed"), phone)
        try t.ledger.signed(.tap(.review, actionId: "a1", device: "iphone"), phone)
        try t.ledger.signed(.tap(.confirm, actionId: "a1", device: "laptop"), laptop)
        try t.ledger.signed(.tap(.approve, actionId: "a1", device: "iphone"), phone)
        try t.ledger.run(.propose(proposal("a2")))
        try t.ledger.signed(.dismiss(actionId: "a2", device: "laptop", reason: "not now"), laptop)
        let path = t.directory.appendingPathComponent("e.jsonl").path
        var bytes: [UInt8] = []
        try t.ledger.exportJSONL { bytes += $0 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let r = try IndependentVerifierTests.runPython([IndependentVerifierTests.script, path])
        #expect(r.status == 0 && r.stdout.hasPrefix("ok 12 "), "\(r.stdout)\(r.stderr)")
        let fresh = try TempLedger()
        let head = try fresh.ledger.importJSONL(path: path)
        #expect(head.seq == 12)
    }
}
