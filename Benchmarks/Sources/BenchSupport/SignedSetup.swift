import ActionLedger
import Crypto

/// A keyed device for the signed-approval workloads (issue 13): its key signs each tap's
/// statement as a phone would, before the measured call.
public struct BenchSigner: Sendable {
    public static let device = "signer-1000"
    /// The private key's raw scalar (swift-crypto's key type is not Sendable).
    let raw: [UInt8]
    let spki: [UInt8]

    public init() {
        let key = P256.Signing.PrivateKey()
        raw = Array(key.rawRepresentation)
        spki = Array(key.publicKey.derRepresentation)
    }

    /// Links ``device`` for person 0 with this key (trust on first use).
    public func link(_ l: Ledger) throws {
        let key = try DeviceKey(spki: spki, protection: .device, trust: .firstUse)
        _ = try l.execute(CommandRequest(.linkKeyedDevice(device: Self.device, person: Sample.person(0), org: Sample.org,
                                                          label: "signing phone", platform: .ios, key: key), now: Sample.base))
    }

    /// A signed approval of `actionId` from ``device`` (the statement read and signed now:
    /// the client's work, not the engine's).
    public func approval(_ l: Ledger, _ actionId: String) throws -> CommandRequest {
        let command = Command.tap(.approve, actionId: actionId, device: Self.device)
        let id = CommandRequest.newCommandId()
        let statement = try l.statement(for: command, commandId: id, claimedAt: Sample.base)
        return CommandRequest(command, commandId: id, now: Sample.base,
                              proof: ProofInput(claimedAt: Sample.base, signature: try signature(statement.bytes)))
    }

    public func signature(_ message: [UInt8]) throws -> [UInt8] {
        Array(try P256.Signing.PrivateKey(rawRepresentation: raw).signature(for: message).rawRepresentation)
    }

    /// One ECDSA P-256 verification as the engine makes per signed tap: the key parsed
    /// from its SPKI DER, then the signature checked.
    public func verify(_ signature: [UInt8], _ message: [UInt8]) -> Bool {
        guard let key = try? P256.Signing.PublicKey(derRepresentation: spki),
              let s = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(s, for: message)
    }
}
