/// A versioned stakes policy (`policy.set`). Version 0 is the built-in default, in force
/// until the first `policy.set`.
public struct PolicyDocument: Sendable, Equatable {
    /// Monotonic: each `policy.set` must carry the current version + 1.
    public var version: UInt32
    /// Low-stakes auto-ship settings.
    public var autoShip: AutoShipSettings
    /// Stakes at which approval needs the client's user verification (biometrics).
    public var userVerification: [Stakes]
    /// Raises stakes for matching actions; never lowers them below the proposer's.
    public var raise: [StakesRaise]
    /// What each step requires as proof, per effective stakes (`policy.set` schema 2);
    /// empty, as in every document written before it: `none` everywhere.
    public var proofs: ProofRequirements

    public init(version: UInt32 = 0, autoShip: AutoShipSettings = AutoShipSettings(),
                userVerification: [Stakes] = [.high], raise: [StakesRaise] = [], proofs: ProofRequirements = ProofRequirements()) {
        self.version = version
        self.autoShip = autoShip
        self.userVerification = userVerification
        self.raise = raise
        self.proofs = proofs
    }

    /// The built-in policy (version 0).
    public static let builtIn = PolicyDocument()

    public struct AutoShipSettings: Sendable, Equatable {
        public var enabled: Bool
        /// Minimum proposer confidence, 0…1.
        public var confidenceFloor: Double
        /// Auto-ships per person per UTC day.
        public var dailyCap: Int

        public init(enabled: Bool = true, confidenceFloor: Double = 0.8, dailyCap: Int = 50) {
            self.enabled = enabled
            self.confidenceFloor = confidenceFloor
            self.dailyCap = dailyCap
        }
    }

    /// `{kind?, surface?, stakes}`: actions matching every given field are at least `stakes`.
    public struct StakesRaise: Sendable, Equatable {
        public var kind: String?
        public var surface: String?
        public var stakes: Stakes

        public init(kind: String? = nil, surface: String? = nil, stakes: Stakes) {
            self.kind = kind
            self.surface = surface
            self.stakes = stakes
        }

        func matches(kind k: String, surface s: String) -> Bool {
            (kind == nil || kind == k) && (surface == nil || surface == s)
        }
    }
}
