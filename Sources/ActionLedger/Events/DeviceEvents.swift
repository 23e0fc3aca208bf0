/// The payloads of device and store events (Specs/events.md, "Device events", "Store events").

/// `device.linked`.
public struct DeviceLink: Sendable, Equatable {
    public var device: String
    public var label: String
    public var platform: Platform
    /// The device's P-256 key (schema 2); nil for a device that signs nothing.
    public var key: DeviceKey? = nil
}

public enum Platform: String, Sendable, CaseIterable {
    case ios, web, cli
}

/// `device.revoked`.
public struct DeviceRevocation: Sendable, Equatable {
    public var device: String
    public var reason: String
    /// Schema 2, when she revoked it from a device of hers: that device's signature over the
    /// challenge (statements.md §3.4), so an auditor proves the revocation from the log alone.
    public var proof: RevocationProof? = nil

    public init(device: String, reason: String, proof: RevocationProof? = nil) {
        self.device = device
        self.reason = reason
        self.proof = proof
    }
}

/// `device.key_rotated`: the device's key in force from this event on. The new key is
/// vouched for (`key.trust` is always `introducedBy`) by an unrevoked keyed device of the
/// same person, the device itself with its old key or another, over the rotation statement
/// (Specs/statements.md §3.1).
public struct KeyRotation: Sendable, Equatable {
    public var device: String
    /// The fingerprint of the key it replaces: the rotation statement binds it, so a
    /// signed rotation cannot be replayed once a later one has moved the key on.
    public var previousFingerprint: Digest
    public var key: DeviceKey

    public init(device: String, previousFingerprint: Digest, key: DeviceKey) {
        self.device = device
        self.previousFingerprint = previousFingerprint
        self.key = key
    }
}
