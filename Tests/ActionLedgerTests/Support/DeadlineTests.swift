import Foundation
import Testing

/// The deadlines themselves can fail a test: a hung child is killed and named, a
/// condition that never holds stops the wait.
@Suite struct DeadlineTests {
    @Test func aHungChildIsKilledAndNamed() throws {
        let child = try Child("/bin/sh", ["-c", "echo started; exec sleep 60"], label: "the sleeping child")
        let start = Date()
        do {
            try child.finish(within: 2)
            Issue.record("a child sleeping 60 s finished within 2 s")
        } catch let hung as Hung {
            #expect(hung.description.contains("the sleeping child") && hung.description.contains("started"), "\(hung)")
        }
        #expect(!child.isRunning)
        #expect(Date().timeIntervalSince(start) < 15)
    }

    @Test func aConditionThatNeverHoldsStopsTheWait() {
        #expect(throws: Hung.self) { try waitUntil("a condition that never holds", seconds: 0.2) { false } }
        #expect(throws: Hung.self) { try finishAll([try Child("/bin/sleep", ["60"])], within: 0.2) }
    }

    @Test func anExitStatusAndASignalAreReported() throws {
        let failed = try Child("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"]).finish(within: 30)
        #expect(failed.status == 3 && !failed.signalled && failed.stdout == "out\n" && failed.stderr == "err\n")
        let killed = try Child("/bin/sh", ["-c", "kill -9 $$"]).finish(within: 30)
        #expect(killed.signalled && killed.status == SIGKILL)
    }
}
