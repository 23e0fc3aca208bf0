import ActionLedger
import Crypto

/// The demo's device keys: made fresh for each demo (never written anywhere), linked with
/// the devices, and used to sign every tap a keyed device makes, as a phone would.
struct DemoKeys {
    private var keys: [String: P256.Signing.PrivateKey] = [:]

    /// The key to link `device` with: trust on first use for the person's first keyed
    /// device, else introduced by `introducer` (which signs the link statement).
    mutating func key(for device: String, _ platform: Platform, protection: KeyProtection, introducer: String?,
                      ledger: Ledger) throws -> DeviceKey {
        let k = P256.Signing.PrivateKey()
        keys[device] = k
        var key = try DeviceKey(spki: Array(k.publicKey.derRepresentation), protection: protection, trust: .firstUse)
        if let introducer, let by = keys[introducer], let storeId = try ledger.read({ try $0.storeId() }) {
            let statement = Statement.link(storeId: storeId, org: "quinn-studio", person: "quinn", device: device,
                                           platform: platform, key: key, introducedBy: introducer)
            key.trust = .introducedBy(device: introducer, signature: Array(try by.signature(for: statement).rawRepresentation))
        }
        return key
    }

    /// The proof a keyed device sends with `command` (nil for an unkeyed device's).
    func proof(_ command: Command, commandId: String, at: Timestamp, ledger: Ledger) throws -> ProofInput? {
        let device: String
        switch command {
        case .tap(_, _, let d, _, _), .dismiss(_, let d, _), .edit(_, let d, _), .hold(_, let d, _): device = d
        default: return nil
        }
        guard let key = keys[device] else { return nil }
        let statement = try ledger.statement(for: command, commandId: commandId, claimedAt: at)
        return ProofInput(claimedAt: at, signature: Array(try key.signature(for: statement.bytes).rawRepresentation))
    }
}
