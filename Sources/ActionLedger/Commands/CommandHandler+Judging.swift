/// What the command path judges beside its switch: a tap's event, and a person's one org.
extension CommandHandler {
    /// The event a tap appends once its proof is checked (`proof`, nil when unsigned), or nil
    /// for a duplicate tap.
    /// - throws: the policy's refusal.
    static func tapPayload(_ step: TapStep, _ s: ActionState, _ device: DeviceState?, _ deviceId: String, userVerified: Bool,
                           seen: Digest?, proof: SignedProof?, policy: PolicyDocument, now: Timestamp) throws -> Payload? {
        // A key declared `user-verification` signs only after the user is verified.
        let verified = userVerified || proof?.level == .signedUV
        let verdict = try Policy.judgeTap(step, on: s, device: device, deviceId: deviceId,
                                          seenContent: proof?.contentHash ?? seen, userVerified: verified,
                                          proof: .of(proof, userVerified: userVerified), policy: policy, now: now)
        guard case .accept(let rule, let stakes) = verdict else { return nil }
        let tap = Tap(contentHash: s.contentHash, policyVersion: policy.version, rulesVersion: Policy.rulesVersion, proof: proof)
        switch step {
        case .review: return .reviewed(tap)
        case .confirm: return .confirmed(tap)
        case .approve:
            return .approved(Approval(contentHash: s.contentHash, policyVersion: policy.version, rule: rule, stakes: stakes,
                                      userVerified: verified, rulesVersion: Policy.rulesVersion, proof: proof))
        }
    }

    /// A person belongs to one org: the first event naming the person with an org binds it.
    /// - parameter bound: the org `person` is bound to, if any.
    static func requireOrg(_ org: String, of person: String, boundTo bound: String?) throws {
        guard let bound, bound != org else { return }
        throw LedgerError(.orgMismatch, "person \(person) cannot be bound to org \(org): a person belongs to one org",
                          details: ["person": .string(person), "org": .string(org)])
    }
}
