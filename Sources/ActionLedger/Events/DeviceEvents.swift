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

/// `store.created`: the first event of a store made by `ledger init` or `ledger demo`. It
/// says, for every auditor to see, whether the store runs on a test clock (`LEDGER_NOW`
/// honoured) and whether it is a disposable demo store (`demo --fresh` may replace it).
/// A store without it (made by an older build or by the library) is a production store.
public struct StoreCreation: Sendable, Equatable {
    /// The engine honours a fixed clock (`LEDGER_NOW`): times in this store prove nothing.
    public var testClock: Bool
    /// Made by `ledger demo`: its content is rebuilt on demand and may be replaced.
    public var demo: Bool
    public init(testClock: Bool, demo: Bool) {
        self.testClock = testClock
        self.demo = demo
    }
}
