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
}
