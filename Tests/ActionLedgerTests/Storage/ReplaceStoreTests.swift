import Foundation
import Testing
@testable import ActionLedger

/// A store file renamed over another (`ledger demo --fresh`) never swallows a write: the
/// rename happens under the old file's writer lock, only if the old store holds what was
/// inspected, and a process that still has the old file open has its next write refused.
@Suite struct ReplaceStoreTests {
    @Test func aHandleOnAReplacedFileHasItsWritesRefusedNotLost() throws {
        let old = try TempLedger(), new = try TempLedger()
        try old.ledger.link("iphone")
        try new.ledger.link("laptop")
        let newHead = try new.ledger.read { try $0.head() }
        try Ledger.replaceStore(at: old.path, with: new.path) { head in #expect(head == 1) }
        #expect(!FileManager.default.fileExists(atPath: new.path))
        // While the new file is open under its old name (its lock file), an open under the
        // path is refused: two lock files on one data file (LockFileClaim).
        expectLedgerError(.invalidInput) { _ = try Ledger(path: old.path) }
        new.close()
        // The old handle still maps the unlinked file: its write is refused, not acknowledged.
        let e = try requireLedgerError(.storage) { try old.ledger.link("tablet") }
        #expect(e.message.contains("replaced"))
        // While this process holds the replaced file under the path's lock file, the path is
        // refused too: one environment per lock file in a process (SharedHandle).
        let held = try requireLedgerError(.invalidInput) { _ = try Ledger(path: old.path) }
        #expect(held.message.contains("replaced meanwhile"), "\(held.message)")
        old.close()
        // Once those handles are gone (a background fold may hold one a moment longer), the path opens.
        let reopened = try openWhenReleased { try Ledger(path: old.path) }
        #expect(try reopened.read { try $0.head() } == newHead)
        #expect(try reopened.read { try $0.deviceState("laptop") } != nil)
        #expect(try reopened.read { try $0.deviceState("tablet") } == nil)
        try reopened.link("tablet")
    }

    @Test func aStoreWrittenSinceItWasInspectedIsKept() throws {
        let old = try TempLedger(), new = try TempLedger()
        try old.ledger.link("iphone")
        struct Changed: Error {}
        #expect(throws: Changed.self) {
            try Ledger.replaceStore(at: old.path, with: new.path) { head in if head != 0 { throw Changed() } }
        }
        #expect(FileManager.default.fileExists(atPath: new.path))
        // Both stores are as they were, and both still take writes.
        try old.ledger.link("tablet")
        try new.ledger.link("laptop")
        #expect(try old.ledger.read { try $0.deviceState("iphone") } != nil)
    }

    /// A `-lock` file deleted under a running writer: the next process makes a new one, with
    /// its own writer mutex, and two writers would commit at once, each overwriting the
    /// other's acknowledged writes. The first handle's writes are refused from then on.
    @Test func aHandleWhoseLockFileWasDeletedHasItsWritesRefused() throws {
        let t = try TempLedger()
        try t.ledger.link("iphone")
        try FileManager.default.removeItem(atPath: t.path + "-lock")
        // A later open would make a new lock file: refused while this handle has the old one.
        expectLedgerError(.invalidInput) { _ = try Ledger(path: t.path) }
        let e = try requireLedgerError(.storage) { try t.ledger.link("tablet") }
        #expect(e.message.contains("-lock was removed"), "\(e.message)")
        t.close()  // once it is closed, an open makes a new lock file and writes go on
        try t.reopen(retrying: true)
        try t.ledger.link("laptop")
        #expect(try t.ledger.read { try $0.head() }.seq == 2)
        #expect(try t.ledger.read { try $0.deviceState("tablet") } == nil)
    }
}
