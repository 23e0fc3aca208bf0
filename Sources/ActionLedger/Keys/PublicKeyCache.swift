import Crypto
import Foundation

/// Parsed P-256 public keys by their SPKI DER. A device's key is read from its
/// `device.linked` event by every command it signs, twice (once to verify outside the write
/// lock, once to re-check under it), and each parse validates the point and re-encodes it,
/// half of that under the lock. A key is parsed once per process instead. Bounded: emptied
/// when full (a store has few keys in use at once).
enum PublicKeyCache {
    static let capacity = 4096

    /// Safe: `keys` is only read and written with `lock` held.
    private final class Store: @unchecked Sendable {
        let lock = NSLock()
        var keys: [[UInt8]: P256.Signing.PublicKey] = [:]
    }

    private static let store = Store()

    /// The key whose canonical SPKI DER is `spki`; nil when the bytes are not one.
    static func key(_ spki: [UInt8]) -> P256.Signing.PublicKey? {
        store.lock.lock()
        let known = store.keys[spki]
        store.lock.unlock()
        if let known { return known }
        guard let key = try? P256.Signing.PublicKey(derRepresentation: spki), Array(key.derRepresentation) == spki else {
            return nil
        }
        store.lock.lock()
        if store.keys.count >= capacity { store.keys.removeAll(keepingCapacity: true) }
        store.keys[spki] = key
        store.lock.unlock()
        return key
    }

    /// Whether `signature` (raw r‖s, 64 bytes) is the ECDSA P-256/SHA-256 signature of the
    /// key `spki` over `message`: what device keys and recovery keys both check.
    static func verifies(_ spki: [UInt8], _ signature: [UInt8], over message: [UInt8]) -> Bool {
        guard let key = key(spki), let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(sig, for: message)
    }
}
