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

/// The requirements an action was proposed under, pinned in `action.proposed` (schema 2):
/// a newer policy may tighten them, never loosen them (Specs/policy.md, rules version 2).
public struct PinnedRequirements: Sendable, Equatable {
    /// The rules version that judged the proposal (2 or more).
    public var rulesVersion: UInt32
    /// The effective stakes under the policy in force at the proposal.
    public var stakes: Stakes
    /// Whether its approval needed user verification then.
    public var userVerification: Bool
    public init(rulesVersion: UInt32, stakes: Stakes, userVerification: Bool) {
        self.rulesVersion = rulesVersion
        self.stakes = stakes
        self.userVerification = userVerification
    }
}
