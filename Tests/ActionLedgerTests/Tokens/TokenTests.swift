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
        #expect(code { _ = try l.issueToken(org: "other-co", scope: .device, subject: "iphone", expiresAt: later, now: t0) } == .orgMismatch)
        #expect(code { _ = try l.issueToken(org: "quinn-co", scope: .auditor, subject: "iphone", expiresAt: later, now: t0) } == .invalidInput)
        #expect(code { _ = try l.issueToken(org: "quinn-co", scope: .specialist, subject: nil, expiresAt: later, now: t0) } == .invalidInput)
        #expect(code { _ = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: t0, now: t0) } == .invalidInput)
        try l.run(.revokeDevice(device: "iphone", reason: "lost"))
        #expect(code { _ = try l.issueToken(org: "quinn-co", scope: .device, subject: "iphone", expiresAt: later, now: t0) } == .deviceRevoked)
        #expect(try l.read { try $0.tokenEvents() }.isEmpty)
    }
}
