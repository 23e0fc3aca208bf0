/// The API token a request came in under, as `ledger serve` found it live when it
/// authenticated the request: the last seq it had read then. A `token.revoked` of it
/// appended since (by `ledger tokens revoke`, while the request was on its way) means it
/// authorises nothing more: the writer looks for one under the write lock, so no event is
/// recorded after the revocation of the token that asked for it.
public struct TokenAuthority: Sendable, Equatable {
    public var tokenId: String
    /// The head seq when the token was found live.
    public var checkedThrough: UInt64

    public init(tokenId: String, checkedThrough: UInt64) {
        self.tokenId = tokenId
        self.checkedThrough = checkedThrough
    }

    /// - throws: `unknown_token` (`token_id`, `revoked_seq`) when it was revoked since.
    func requireUnrevoked(_ reader: LogReader) throws {
        // Token events are rare and the gap is the few events since authentication: a scan
        // of their type bytes, decoding only token events.
        for e in try reader.tokenEvents(from: checkedThrough + 1) {
            if case .tokenRevoked(let r) = e.payload, r.tokenId == tokenId {
                throw LedgerError(.unknownToken, "token \(tokenId) was revoked (seq \(e.seq)) before this command was recorded",
                                  details: ["token_id": .string(tokenId), "revoked_seq": .number(Double(e.seq))])
            }
        }
    }
}
