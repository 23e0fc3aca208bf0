import ActionLedger
import Crypto
import Foundation

/// Session challenges without server state: nothing a caller without a device's key sends
/// is kept, so no caller can fill a table, or evict the challenge a device is signing, and
/// the answers are the same whatever the device id. The id carries the challenge's expiry,
/// a random draw and the device; the statement's challenge line is an HMAC of them and of
/// the purpose under a key drawn when the server starts, so a forged or altered id names a
/// statement nobody has signed. An id is spent once its signature verifies (``spend(_:now:)``):
/// those are bounded by the keyed devices' real sign-ins within the lifetime.
struct Challenges: Sendable {
    /// One challenge's parts, read back from its id.
    struct Parsed {
        let expiresAt: Timestamp
        let draw: String
        let device: String
    }

    /// The HMAC key, drawn when the server starts (bytes: `SymmetricKey` is not Sendable).
    private let key: [UInt8] = {
        var g = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: 0...255, using: &g) }
    }()
    private let spent = Locked([String: Timestamp]())

    /// A new challenge's id and the nonce its statement names.
    func issue(device: String, purpose: String, expiresAt: Timestamp) -> (id: String, nonce: ActionLedger.Digest) {
        let draw = LedgerServer.randomHex(16)
        let id = "chl-\(String(expiresAt.milliseconds, radix: 16))-\(draw)-\(device)"
        return (id, nonce(device: device, purpose: purpose, expiresAt: expiresAt, draw: draw))
    }

    /// The challenge line of a statement (its 64 hex digits): HMAC-SHA256 of what the id
    /// carries and the purpose.
    func nonce(device: String, purpose: String, expiresAt: Timestamp, draw: String) -> ActionLedger.Digest {
        let message = Data("actionledger-session-challenge\n\(device)\n\(purpose)\n\(expiresAt.milliseconds)\n\(draw)".utf8)
        return ActionLedger.Digest(bytes: Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))))!
    }

    /// The parts of a well-formed id, else nil.
    static func parse(_ id: String) -> Parsed? {
        let parts = id.split(separator: "-", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "chl", let ms = Int64(parts[1], radix: 16), parts[2].count == 32,
              Identifier.problem(String(parts[3])) == nil else { return nil }
        return Parsed(expiresAt: Timestamp(milliseconds: ms), draw: String(parts[2]), device: String(parts[3]))
    }

    /// Marks `id` used; false when it already was (a challenge answers once).
    func spend(_ id: String, expiresAt: Timestamp, now: Timestamp) -> Bool {
        spent.withLock { s in
            if s.count > 1024 { s = s.filter { $0.value > now } }  // expired ones can never be replayed
            guard s[id] == nil else { return false }
            s[id] = expiresAt
            return true
        }
    }
}
