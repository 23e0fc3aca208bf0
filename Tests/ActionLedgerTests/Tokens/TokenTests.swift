import Foundation
import Testing
@testable import ActionLedger

/// Operator tokens: issued and revoked as events, recognised by the SHA-256 of their secret only.
@Suite struct TokenTests {
    @Test func issuedTokenIsAnEventWithTheHashNeverTheSecret() throws {
        let temp = try TempLedger()
        let l = temp.ledger!
        try l.link("iphone")
        let issued = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: t0.adding(milliseconds: Timestamp.day),
                                      now: t0)
        #expect(issued.secret.hasPrefix("alt_\(issued.record.tokenId)_"))
        let (tokens, events) = try l.read { r in (try r.tokens(), try r.tokenEvents()) }
        #expect(tokens[issued.record.tokenId]?.issue.secretHash == Ledger.tokenHash(issued.secret))
        #expect(events.map(\.type) == [.tokenIssued])
        // The secret appears nowhere in the log's bytes.
        var raw: [UInt8] = []
        try l.read { r in try r.forEachRaw { _, v in raw += Array(v); return true } }
        #expect(String(decoding: raw, as: UTF8.self).contains(issued.secret.suffix(64)) == false)
        #expect(tokens[issued.record.tokenId]!.isLive(at: t0))
        #expect(!tokens[issued.record.tokenId]!.isLive(at: t0.adding(milliseconds: Timestamp.day)))
    }

    @Test func revokingEndsTheTokenOnceAndNamesUnknownOnes() throws {
        let temp = try TempLedger()
        let l = temp.ledger!
        let issued = try l.issueToken(org: "quinn-co", scope: .auditor, subject: nil, expiresAt: t0.adding(milliseconds: Timestamp.day), now: t0)
        let revoked = try l.revokeToken(issued.record.tokenId, reason: "left", now: t0.adding(milliseconds: 1000))
        #expect(revoked.revokedAt == t0.adding(milliseconds: 1000))
        #expect(try l.read { try $0.tokens()[issued.record.tokenId]?.isLive(at: t0.adding(milliseconds: 2000)) } == false)
        #expect(throws: LedgerError.self) { try l.revokeToken(issued.record.tokenId, now: t0.adding(milliseconds: 3000)) }
        do {
            try l.revokeToken("tok-nope", now: t0.adding(milliseconds: 3000))
            Issue.record("revoked an unknown token")
        } catch let e as LedgerError {
            #expect(e.code == .unknownToken && e.code.exitStatus == 32)
        }
    }

    @Test func deviceTokensNeedALiveDeviceOfTheOrg() throws {
        let temp = try TempLedger()
        let l = temp.ledger!
        let later = t0.adding(milliseconds: Timestamp.day)
        func code(_ body: () throws -> Void) -> LedgerError.Code? {
            do { try body(); return nil } catch let e as LedgerError { return e.code } catch { return .storage }
        }
        #expect(code { _ = try l.issueToken(org: "quinn-co", scope: .device, subject: "ghost", expiresAt: later, now: t0) } == .unknownDevice)
        try l.link("iphone")
        // With the details cli.md's error table names for each code.
        let mismatch = try requireLedgerError(.orgMismatch) {
            _ = try l.issueToken(org: "other-co", scope: .device, subject: "iphone", expiresAt: later, now: t0)
        }
        #expect(mismatch.details["person"] == "quinn" && mismatch.details["org"] == "other-co", "\(mismatch.details)")
        #expect(code { _ = try l.issueToken(org: "quinn-co", scope: .auditor, subject: "iphone", expiresAt: later, now: t0) } == .invalidInput)
        #expect(code { _ = try l.issueToken(org: "quinn-co", scope: .specialist, subject: nil, expiresAt: later, now: t0) } == .invalidInput)
        #expect(code { _ = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: t0, now: t0) } == .invalidInput)
        try l.run(.revokeDevice(device: "iphone", reason: "lost"))
        let revoked = try requireLedgerError(.deviceRevoked) {
            _ = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: later, now: t0)
        }
        let at = try #require(try l.read { try $0.deviceState("iphone") }?.revokedAt)
        #expect(revoked.details["device"] == "iphone" && revoked.details["revoked_at"] == .string(at.iso8601), "\(revoked.details)")
        #expect(try l.read { try $0.tokenEvents() }.isEmpty)
    }

    /// A token revoked while a request made under it was on its way authorises nothing more:
    /// the writer finds the revocation among the events since the server found the token live,
    /// so no event is recorded after the revocation of the token that asked for it.
    @Test func aTokenRevokedInFlightAuthorisesNothing() throws {
        let temp = try TempLedger()
        let l = temp.ledger!
        try l.link("iphone")
        try l.run(.propose(proposal("a1", stakes: .low)))
        let later = t0.adding(milliseconds: Timestamp.day)
        let token = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: later, now: t0)
        let other = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: later, now: t0)
        let seen = try l.read { try $0.head().seq }  // the server authenticates the request here
        try l.revokeToken(other.record.tokenId, now: t0)  // another token's revocation changes nothing
        var approve = CommandRequest(.tap(.approve, actionId: "a1", device: "iphone"), now: t0)
        approve.authority = TokenAuthority(tokenId: token.record.tokenId, checkedThrough: seen)
        try l.revokeToken(token.record.tokenId, now: t0)  // ... and the operator revokes it before the writer runs it
        let head = try l.read { try $0.head().seq }
        let e = try requireLedgerError(.unknownToken) { try l.execute(approve) }
        #expect(e.details["revoked_seq"] == .number(Double(head)) && e.details["token_id"] == .string(token.record.tokenId))
        #expect(try l.read { try $0.head().seq } == head)
        // Found live after its revocation (a later seq) it would have been refused at the door;
        // the writer only looks past what the server saw.
        approve.authority = TokenAuthority(tokenId: other.record.tokenId, checkedThrough: head)
        #expect(try l.execute(approve).events.count == 1)
    }
}
