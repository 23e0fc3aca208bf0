import Foundation

/// A request to change the ledger. Each runs in one write transaction: read state, judge
/// it with the ``Policy``, append events, commit, then report.
public enum Command: Sendable, Equatable {
    /// Record a proposal; low-stakes ones may auto-ship at once.
    // Boxed, as `Payload.proposed` is: requests are copied whole on their way to the writer.
    indirect case propose(ProposalInput)
    /// A person's tap from a device. `seenContent`, when given, is the content hash the
    /// client showed; a stale one is refused.
    case tap(TapStep, actionId: String, device: String, userVerified: Bool = false, seenContent: Digest? = nil)
    case dismiss(actionId: String, device: String, reason: String)
    /// Replace the preview text; voids every earlier tap.
    case edit(actionId: String, device: String, text: String)
    /// Snooze out of the Today feed until `until`.
    case hold(actionId: String, device: String, until: Timestamp)
    /// Record what happened when an approved or auto-shipped action ran.
    case recordOutcome(actionId: String, succeeded: Bool, outcome: JSON)
    /// Mark a pending action whose `expires_at` has passed as expired.
    case expire(actionId: String)
    case linkDevice(device: String, person: String, org: String, label: String, platform: Platform)
    /// Link a device with its P-256 key: trust on first use for the person's first keyed
    /// device, otherwise introduced by an unrevoked keyed device of hers, or recovered by her
    /// recovery key once every keyed device of hers is revoked (`key.trust`). With her first
    /// keyed device the operator may also register her `recoveryKey` (same command).
    case linkKeyedDevice(device: String, person: String, org: String, label: String, platform: Platform, key: DeviceKey,
                         recoveryKey: RecoveryKey? = nil)
    /// Revoke a device. `by` is the person's own device the revocation was made from, when
    /// she made it: it is recorded as the event's `device`, must be a linked, unrevoked device
    /// of the same person with a user-verified key, the request's actor must be that person,
    /// and `proof` is that key's signature over the session challenge naming the revoked
    /// device (Specs/statements.md §3.4), checked and recorded. Without `by` the operator
    /// revoked it.
    case revokeDevice(device: String, reason: String, by: String? = nil, proof: RevocationProof? = nil)
    /// Put a new key in force for a keyed device; `key.trust` names the unrevoked keyed
    /// device of the same person (the device itself, or another) that signed the rotation
    /// statement with its key in force (``Statement/rotation(storeId:org:person:device:platform:key:previous:signedBy:)``).
    case rotateDeviceKey(device: String, key: DeviceKey)
    /// Put `key` in force as `person`'s recovery key, vouched for by `trust`: one of her
    /// unrevoked keyed devices or the recovery key it replaces signed the recovery-key
    /// statement (``Statement/recoveryKey(storeId:org:person:key:previous:signedBy:)``).
    case setRecoveryKey(person: String, key: RecoveryKey, trust: RecoveryTrust)
    /// Put a new policy version in force; its version must be the current one + 1 (or 0 to take the next).
    case setPolicy(PolicyDocument, org: String)
    /// Put a WebAuthn relying party in force for the store's `webauthn` proofs.
    case setRelyingParty(RelyingParty)

    /// The action the command concerns, if any.
    public var actionId: String? {
        switch self {
        case .propose(let p): p.actionId
        case .tap(_, let a, _, _, _), .dismiss(let a, _, _), .edit(let a, _, _), .hold(let a, _, _),
             .recordOutcome(let a, _, _), .expire(let a): a
        case .linkDevice, .linkKeyedDevice, .revokeDevice, .rotateDeviceKey, .setRecoveryKey, .setPolicy, .setRelyingParty: nil
        }
    }
}

/// A command with its context: idempotency key, clock and actor.
public struct CommandRequest: Sendable, Equatable {
    public var command: Command
    /// Replaying a command id returns the original result and appends nothing.
    public var commandId: String
    /// The engine clock for this command (system time, or `LEDGER_NOW` in tests and demos).
    public var now: Timestamp
    /// Who acts for commands not made by an action's person (device and policy admin).
    public var actor: String
    /// The device's signature over the statement of a tap, dismissal, edit or hold
    /// (Specs/statements.md); required from a keyed device.
    public var proof: ProofInput?
    /// Set by ``Ledger/execute(group:)`` when it verified `proof` outside the write lock: the
    /// statement and key it verified, so the writer re-checks them instead of the signature.
    var preverified: ProofGate.Verified?
    /// The API token the request came in under (`ledger serve`): refused if revoked since.
    public var authority: TokenAuthority?

    public init(_ command: Command, commandId: String? = nil, now: Timestamp, actor: String = "operator",
                proof: ProofInput? = nil) {
        self.command = command
        self.commandId = commandId ?? CommandRequest.newCommandId()
        self.now = now
        self.actor = actor
        self.proof = proof
    }

    /// `cmd-` and 32 hex digits: the wall-clock milliseconds (12 digits), then 80 random
    /// bits. Ids made one after another sort together, so recording them in the
    /// `commands` index appends near the B-tree's right edge instead of dirtying a random
    /// leaf page per command.
    public static func newCommandId() -> String {
        // 80 random bits from one system call (SystemRandomNumberGenerator makes one per word).
        var random = (UInt64(0), UInt16(0))
        withUnsafeMutableBytes(of: &random) { fillRandom($0) }
        let ms = UInt64(max(0, Date().timeIntervalSince1970 * 1000)) & 0xFFFF_FFFF_FFFF
        let a = ms << 16 | UInt64(random.1), b = random.0
        return "cmd-" + Hex.encode(a) + Hex.encode(b)
    }
}

/// What a command did.
public struct CommandResult: Sendable, Equatable {
    public var commandId: String
    /// The events it appended (on a replay: the ones it appended the first time).
    public var events: [StoredEvent]
    /// True when the command id had already run: nothing was appended now.
    public var replayed: Bool
    /// The action afterwards, for action commands.
    public var action: ActionState?
    /// The next tap the action needs afterwards, if it is still pending.
    public var nextTap: TapStep?
    /// A tap already counted on this content: nothing was appended.
    public var duplicateTap: Bool = false
    /// Set when the command was refused although its proof verified: `events` holds the
    /// `tap.refused` it recorded, and ``Ledger/execute(_:)`` reports the refusal.
    public var refusal: LedgerError? {
        get { refused?.error }
        set { refused = newValue.map(Refused.init) }
    }
    private var refused: Refused?

    /// Results compare by the refusal's code and message (a ``LedgerError`` is not Equatable).
    private struct Refused: Equatable, Sendable {
        let error: LedgerError
        static func == (a: Refused, b: Refused) -> Bool { a.error.code == b.error.code && a.error.message == b.error.message }
    }

    init(commandId: String, events: [StoredEvent], replayed: Bool, action: ActionState? = nil, nextTap: TapStep? = nil,
         duplicateTap: Bool = false) {
        self.commandId = commandId
        self.events = events
        self.replayed = replayed
        self.action = action
        self.nextTap = nextTap
        self.duplicateTap = duplicateTap
    }
}

/// Fills `buffer` with cryptographically secure random bytes: glibc's `arc4random_buf`
/// (a ChaCha20 generator the kernel seeds) makes no system call per request, where
/// `SystemRandomNumberGenerator` makes one per word.
func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    arc4random_buf(base, buffer.count)
}
