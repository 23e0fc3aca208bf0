import Foundation
import Testing
@testable import ActionLedger

@Suite struct CommandIdTests {
    @Test func generatedIdsAreHexTimeOrderedAndUnique() throws {
        let first = CommandRequest.newCommandId()
        #expect(first.hasPrefix("cmd-") && first.count == 36)
        #expect(first.dropFirst(4).allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(FieldReader.identifierProblem(first) == nil)
        usleep(3_000)
        let later = (0..<1000).map { _ in CommandRequest.newCommandId() }
        #expect(Set(later).count == later.count)
        // The first 12 hex digits are the creation millisecond: a later id sorts after.
        #expect(later.allSatisfy { $0 > first })
        let ms = UInt64(Date().timeIntervalSince1970 * 1000)
        let stamped = UInt64(later[0].dropFirst(4).prefix(12), radix: 16)!
        #expect(stamped <= ms && ms - stamped < 60_000)
    }
}
