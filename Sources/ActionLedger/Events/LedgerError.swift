/// An error with a stable, documented code (Specs/cli.md lists them with exit codes).
///
/// Every refusal the engine makes is a `LedgerError`: the CLI prints ``message`` on
/// stderr and, with `--json`, `{"error": {"code", "message", …details}}`.
public struct LedgerError: Error, Sendable, CustomStringConvertible {
    /// A stable error code and the process exit status that goes with it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public let exitStatus: Int32
        public var description: String { rawValue }

        public static let storage = Code(rawValue: "storage_error", exitStatus: 1)
        public static let invalidInput = Code(rawValue: "invalid_input", exitStatus: 2)
        public static let unknownAction = Code(rawValue: "unknown_action", exitStatus: 3)
        public static let unknownDevice = Code(rawValue: "unknown_device", exitStatus: 4)
        public static let deviceRevoked = Code(rawValue: "device_revoked", exitStatus: 5)
        public static let tapsRequired = Code(rawValue: "taps_required", exitStatus: 6)
        public static let userVerificationRequired = Code(rawValue: "user_verification_required", exitStatus: 7)
        public static let alreadyDecided = Code(rawValue: "already_decided", exitStatus: 8)
        public static let staleContent = Code(rawValue: "stale_content", exitStatus: 9)
        public static let duplicateAction = Code(rawValue: "duplicate_action", exitStatus: 10)
        public static let deviceNotOwned = Code(rawValue: "device_not_owned", exitStatus: 11)
        public static let readOnly = Code(rawValue: "read_only", exitStatus: 12)
        public static let integrityFailure = Code(rawValue: "integrity_failure", exitStatus: 13)
        public static let notEmpty = Code(rawValue: "not_empty", exitStatus: 14)
        public static let actionExpired = Code(rawValue: "action_expired", exitStatus: 15)
        public static let notApproved = Code(rawValue: "not_approved", exitStatus: 16)
        public static let duplicateDevice = Code(rawValue: "duplicate_device", exitStatus: 17)
        public static let corruptEvent = Code(rawValue: "corrupt_event", exitStatus: 18)
        public static let projectionStale = Code(rawValue: "projection_stale", exitStatus: 19)
        public static let busy = Code(rawValue: "busy", exitStatus: 20)
        public static let clockBehind = Code(rawValue: "clock_behind", exitStatus: 21)
        public static let testClockOnly = Code(rawValue: "test_clock_only", exitStatus: 22)
        public static let replayMismatch = Code(rawValue: "replay_mismatch", exitStatus: 23)
        public static let orgMismatch = Code(rawValue: "org_mismatch", exitStatus: 24)
        public static let introductionRequired = Code(rawValue: "introduction_required", exitStatus: 25)
        public static let badProof = Code(rawValue: "bad_proof", exitStatus: 26)
        public static let proofRequired = Code(rawValue: "proof_required", exitStatus: 27)
        public static let migrationRequired = Code(rawValue: "migration_required", exitStatus: 40)

        public static let all: [Code] = [
            .storage, .invalidInput, .unknownAction, .unknownDevice, .deviceRevoked, .tapsRequired,
            .userVerificationRequired, .alreadyDecided, .staleContent, .duplicateAction, .deviceNotOwned,
            .readOnly, .integrityFailure, .notEmpty, .actionExpired, .notApproved, .duplicateDevice,
            .corruptEvent, .projectionStale, .busy, .clockBehind, .testClockOnly, .replayMismatch, .orgMismatch,
            .introductionRequired, .badProof, .proofRequired, .migrationRequired,
        ]
    }

    public let code: Code
    public let message: String
    /// Machine-readable specifics, e.g. `next_tap`, or who decided first.
    public let details: JSONObject

    public init(_ code: Code, _ message: String, details: JSONObject = JSONObject()) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code): \(message)" }

    /// `{"error": {"code": …, "message": …, …details}}`.
    public var json: JSON {
        var body: JSONObject = ["code": .string(code.rawValue), "message": .string(message)]
        body.pairs += details.pairs
        return ["error": .object(body)]
    }
}
