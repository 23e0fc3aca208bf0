/// The exact bytes a device signs (Specs/statements.md gives them byte by byte, with test
/// vectors). Text lines, each `name:value` and one LF: every value is an identifier, a
/// time, a fixed word or hex, none of which can hold a line break, so the lines cannot be
/// re-cut into another statement.
public enum Statement {
    /// The first line of a tap statement: domain separator and version. A signature over
    /// it can never pass for a checkpoint or a link statement, whose first lines differ.
    public static let tapDomain = "actionledger-statement-v1"
    /// The first line of a device link (introduction) statement.
    public static let linkDomain = "actionledger-link-v1"

    /// A step a device signs.
    public enum Step: String, Sendable, CaseIterable {
        case review, confirm, approve, dismiss, edit, hold
    }

    /// What a tap statement binds.
    public struct Tap: Sendable, Equatable {
        public var storeId: Digest
        public var org: String
        public var actionId: String
        public var step: Step
        /// The content hash the device displayed.
        public var contentHash: Digest
        public var device: String
        public var commandId: String
        /// When the device says it signed (the engine's own time stays the event's `at`).
        public var claimedAt: Timestamp
        /// A hold's `until`.
        public var until: Timestamp?
        /// An edit's new text (bound as its SHA-256).
        public var text: String?
        /// A dismissal's reason (bound as its SHA-256; may be empty).
        public var reason: String?

        public init(storeId: Digest, org: String, actionId: String, step: Step, contentHash: Digest, device: String,
                    commandId: String, claimedAt: Timestamp, until: Timestamp? = nil, text: String? = nil,
                    reason: String? = nil) {
            self.storeId = storeId
            self.org = org
            self.actionId = actionId
            self.step = step
            self.contentHash = contentHash
            self.device = device
            self.commandId = commandId
            self.claimedAt = claimedAt
            self.until = until
            self.text = text
            self.reason = reason
        }

        /// The lines in order, without their LFs.
        public var lines: [(name: String, value: String)] {
            var out: [(String, String)] = [
                ("store", storeId.hex), ("org", org), ("action", actionId), ("step", step.rawValue),
                ("content", contentHash.hex), ("device", device), ("command", commandId), ("claimed_at", claimedAt.iso8601),
            ]
            // Each step binds exactly its own parameter, so a statement for one step
            // cannot be completed into another's.
            switch step {
            case .hold: out.append(("until", (until ?? Timestamp(milliseconds: 0)).iso8601))
            case .edit: out.append(("text_sha256", Statement.sha256Hex(text ?? "")))
            case .dismiss: out.append(("reason_sha256", Statement.sha256Hex(reason ?? "")))
            case .review, .confirm, .approve: break
            }
            return out
        }

        /// The bytes to sign.
        public var bytes: [UInt8] { Statement.render(Statement.tapDomain, lines) }
    }

    /// The statement an introducing device signs to vouch for a new device's key.
    public static func link(storeId: Digest, org: String, person: String, device: String, platform: Platform,
                            key: DeviceKey, introducedBy: String) -> [UInt8] {
        render(linkDomain, [
            ("store", storeId.hex), ("org", org), ("person", person), ("device", device), ("platform", platform.rawValue),
            ("key", key.fingerprint.hex), ("key_protection", key.protection.rawValue), ("introduced_by", introducedBy),
        ])
    }

    /// The first line of a key rotation statement.
    public static let rotationDomain = "actionledger-rotate-v1"

    /// The statement a keyed device of the person signs to put `key` in force for `device`
    /// in place of the key `previous` (Specs/statements.md §3.1).
    public static func rotation(storeId: Digest, org: String, person: String, device: String, platform: Platform,
                                key: DeviceKey, previous: Digest, signedBy: String) -> [UInt8] {
        render(rotationDomain, [
            ("store", storeId.hex), ("org", org), ("person", person), ("device", device), ("platform", platform.rawValue),
            ("key", key.fingerprint.hex), ("key_protection", key.protection.rawValue), ("previous_key", previous.hex),
            ("signed_by", signedBy),
        ])
    }

    /// The first line of a session challenge statement (`ledger serve`).
    public static let sessionDomain = "actionledger-session-v1"

    /// The session challenge statement (Specs/statements.md §3.4): what a device signs to sign
    /// in (`session`), revoke one of her devices (`revoke:DEVICE`) or end her other sessions
    /// (`sign_out_others`). Its lines keep the first form the server shipped, `name: value`.
    public static func session(storeId: Digest, device: String, purpose: String, challenge: Digest) -> [UInt8] {
        Array("\(sessionDomain)\nstore_id: \(storeId.hex)\ndevice: \(device)\npurpose: \(purpose)\nchallenge: \(challenge.hex)\n".utf8)
    }

    static func render(_ domain: String, _ lines: [(name: String, value: String)]) -> [UInt8] {
        var out = Array(domain.utf8)
        out.append(0x0A)
        for (name, value) in lines {
            out += Array(name.utf8)
            out.append(UInt8(ascii: ":"))
            out += Array(value.utf8)
            out.append(0x0A)
        }
        return out
    }

    static func sha256Hex(_ s: String) -> String {
        Array(s.utf8).withUnsafeBytes { Digest.sha256($0) }.hex
    }
}
