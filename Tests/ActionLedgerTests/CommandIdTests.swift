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

    /// Ids are ASCII letters, digits and - _ . : @ only; the message names the first other
    /// character by its code point (a look-alike or an invisible one must not pass).
    @Test func identifiersRefuseEveryOtherCharacterByName() {
        #expect(FieldReader.identifierProblem("of-05:a_b.c@d") == nil)
        for (id, named) in [("p\u{0430}y", "U+0430"), ("a\u{202E}b", "U+202E"), ("a\u{00A0}b", "U+00A0"), ("a b", "U+0020"),
                            ("caf\u{00E9}", "U+00E9"), ("tab\t", "U+0009"), ("a/b", "U+002F")] {
            #expect(FieldReader.identifierProblem(id)?.hasSuffix("(found \(named))") == true, "\(id.unicodeScalars.map(\.value))")
        }
        #expect(FieldReader.identifierProblem("") == "must not be empty")
        #expect(FieldReader.identifierProblem(String(repeating: "a", count: FieldReader.Limit.id + 1))?.hasPrefix("is longer") == true)
    }

    /// A proposal retried under its command id with its document changed is another command
    /// under a used id (policy.md `command.replay_own`, cli.md): the refusal it would get
    /// without the id, else `invalid_input` on `command_id`; never the first one's result.
    @Test func aChangedProposalUnderAUsedIdIsJudgedAsAnotherCommand() throws {
        let t = try TempLedger()
        let first = try t.ledger.run(.propose(proposal("x1", text: "hello")), commandId: "pc-1")
        #expect(try t.ledger.run(.propose(proposal("x1", text: "hello")), commandId: "pc-1").replayed)
        let head = try t.ledger.read { try $0.head() }
        expectLedgerError(.duplicateAction) { try t.ledger.run(.propose(proposal("x1", text: "changed")), commandId: "pc-1") }
        let taken = try requireLedgerError(.invalidInput) { try t.ledger.run(.propose(proposal("x2", text: "hello")), commandId: "pc-1") }
        #expect(taken.details["field"] == "command_id")
        #expect(try t.ledger.read { try $0.head() } == head && first.events.count >= 1)
        #expect(try t.ledger.read { try $0.actionState("x2") } == nil)
    }

    /// So is a dismissal, edit or hold retried with its reason, text or end changed: it had
    /// been answered with the first one's result, the change dropped without a word.
    @Test func aChangedDismissalEditOrHoldUnderAUsedIdIsJudgedAsAnotherCommand() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        for id in ["e1", "h1", "d1"] { try l.run(.propose(proposal(id))) }
        try l.run(.edit(actionId: "e1", device: "iphone", text: "first"), commandId: "ed-1")
        #expect(try l.run(.edit(actionId: "e1", device: "iphone", text: "first"), commandId: "ed-1").replayed)
        let head = try l.read { try $0.head() }
        let edited = try requireLedgerError(.invalidInput) { try l.run(.edit(actionId: "e1", device: "iphone", text: "second"), commandId: "ed-1") }
        #expect(edited.details["field"] == "command_id")
        try l.run(.hold(actionId: "h1", device: "iphone", until: t0.adding(milliseconds: 60_000)), commandId: "ho-1")
        #expect(try l.run(.hold(actionId: "h1", device: "iphone", until: t0.adding(milliseconds: 60_000)), commandId: "ho-1").replayed)
        expectLedgerError(.invalidInput) { try l.run(.hold(actionId: "h1", device: "iphone", until: t0.adding(milliseconds: 90_000)), commandId: "ho-1") }
        try l.run(.dismiss(actionId: "d1", device: "iphone", reason: "no"), commandId: "di-1")
        #expect(try l.run(.dismiss(actionId: "d1", device: "iphone", reason: "no"), commandId: "di-1").replayed)
        // Without the id it would meet a decided action: that refusal, never the first result.
        expectLedgerError(.alreadyDecided) { try l.run(.dismiss(actionId: "d1", device: "iphone", reason: "other"), commandId: "di-1") }
        #expect(try l.read { try $0.head() }.seq == head.seq + 2)
    }
}
