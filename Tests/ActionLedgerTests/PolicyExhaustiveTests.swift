import Testing
@testable import ActionLedger

/// Every stakes × every tap sequence up to four taps × device state × user verification,
/// judged by the policy and checked against a predictor written from the table in
/// Specs/policy.md (not from Policy.swift).
@Suite struct PolicyExhaustiveTests {
    /// The device a whole sequence is tapped from.
    enum DeviceCase: String, CaseIterable {
        case linkedOwn = "own-phone", revoked = "revoked-phone", unknown = "ghost-phone", othersPerson = "mia-phone"
    }

    /// What the table says happens to one tap.
    enum Outcome: Equatable, CustomStringConvertible {
        case accepted(rule: String?)
        case duplicate
        case refused(code: String, nextTap: String?)

        var description: String {
            switch self {
            case .accepted(let rule): "accepted\(rule.map { " (\($0))" } ?? "")"
            case .duplicate: "duplicate"
            case .refused(let code, let next): "refused \(code)\(next.map { " next_tap=\($0)" } ?? "")"
            }
        }
    }

    /// Specs/policy.md as data: the tap path and rule id of each stakes, then the checks in
    /// the documented order (device, decision, path, user verification).
    struct Predictor {
        /// Read from the table of Specs/policy.md §2 (``PolicySpec/tapPaths()``); empty when
        /// it cannot be read, which `thePredictorReadsTheTapPathTable` reports.
        static let table = (try? PolicySpec.tapPaths()) ?? [:]
        static let paths = table.mapValues(\.path)
        static let rules = table.mapValues(\.rule)
        static let order = ["low", "medium", "high"]

        let stakes: String
        let verificationStakes: Set<String>
        var made = 0
        var decided = false

        /// The proposer's stakes raised (never lowered) by a policy raise to `raise`.
        init(proposed: String, raise: String?, verificationStakes: Set<String>) {
            let p = Predictor.order.firstIndex(of: proposed)!, r = raise.flatMap { Predictor.order.firstIndex(of: $0) } ?? 0
            stakes = Predictor.order[max(p, r)]
            self.verificationStakes = verificationStakes
        }

        var next: String? { decided ? nil : Predictor.paths[stakes]![made] }

        mutating func tap(_ step: String, device: DeviceCase, verified: Bool) -> Outcome {
            switch device {
            case .unknown: return .refused(code: "unknown_device", nextTap: nil)
            case .revoked: return .refused(code: "device_revoked", nextTap: nil)
            case .othersPerson: return .refused(code: "device_not_owned", nextTap: nil)
            case .linkedOwn: break
            }
            if decided { return .refused(code: "already_decided", nextTap: nil) }
            let path = Predictor.paths[stakes]!
            guard let position = path.firstIndex(of: step) else { return .refused(code: "taps_required", nextTap: path[made]) }
            if position < made { return .duplicate }
            if position > made { return .refused(code: "taps_required", nextTap: path[made]) }
            if step == "approve", verificationStakes.contains(stakes), !verified {
                return .refused(code: "user_verification_required", nextTap: "approve")
            }
            made += 1
            if step == "approve" {
                decided = true
                return .accepted(rule: Predictor.rules[stakes])
            }
            return .accepted(rule: nil)
        }
    }

    static let steps = ["review", "confirm", "approve"]

    /// Every sequence of 1…4 taps.
    static let sequences: [[String]] = (1...4).flatMap { n in
        (0..<Int(pow3(n))).map { code in (0..<n).map { k in steps[code / pow3(k) % 3] } }
    }

    static func pow3(_ n: Int) -> Int { (0..<n).reduce(1) { a, _ in a * 3 } }

    static let quinnPhone = DeviceState(device: "own-phone", person: "quinn", org: "quinn-co", label: "iPhone",
                                        platform: .ios, linkedAt: t0, revokedAt: nil)

    static func deviceState(_ c: DeviceCase) -> DeviceState? {
        var d = quinnPhone
        d.device = c.rawValue
        switch c {
        case .linkedOwn: return d
        case .revoked: d.revokedAt = t0; return d
        case .unknown: return nil
        case .othersPerson: d.person = "mia"; return d
        }
    }

    static let verificationSets: [[Stakes]] = [[], [.low], [.medium], [.high], [.low, .medium], [.low, .high],
                                               [.medium, .high], [.low, .medium, .high]]

    /// Pure: `Policy.judgeTap` and `Policy.nextTap` against the predictor, on every
    /// combination also of raise rules and user-verification policies.
    /// The table was read: one path per stakes, each ending in the approve that decides.
    /// (Whether the engine follows it is what the exhaustive test below checks.)
    @Test func thePredictorReadsTheTapPathTable() throws {
        let table = try PolicySpec.tapPaths()
        #expect(Set(table.keys) == ["low", "medium", "high"], "Specs/policy.md §2: \(table)")
        #expect(table.values.allSatisfy { $0.path.last == "approve" && !$0.rule.isEmpty }, "Specs/policy.md §2: \(table)")
    }

    @Test func everyTapSequenceMatchesTheTable() throws {
        try #require(Set(Predictor.paths.keys) == ["low", "medium", "high"], "Specs/policy.md §2 could not be read")
        var cases = 0, mismatches: [String] = []
        for proposed in Stakes.allCases {
            for raise in [nil, Stakes.medium, .high] {
                for uv in PolicyExhaustiveTests.verificationSets {
                    let policy = PolicyDocument(version: 3, userVerification: uv,
                                                raise: raise.map { [.init(kind: "publish_post", stakes: $0)] } ?? [])
                    for device in DeviceCase.allCases {
                        for verified in [false, true] {
                            for sequence in PolicyExhaustiveTests.sequences {
                                cases += 1
                                if let m = PolicyExhaustiveTests.judge(sequence, proposed, policy, device, verified) {
                                    mismatches.append("\(proposed) raise=\(raise?.rawValue ?? "-") uv=\(uv.map(\.rawValue)) "
                                        + "\(device) verified=\(verified) \(sequence): \(m)")
                                }
                            }
                        }
                    }
                }
            }
        }
        #expect(cases == 3 * 3 * 8 * 4 * 2 * 120)
        #expect(mismatches.count == 0,
                "\(mismatches.count) of \(cases) cases differ, e.g.:\n\(mismatches.prefix(10).joined(separator: "\n"))")
    }

    /// Runs one sequence through the pure policy, folding accepted taps into the state as
    /// the engine does; returns a description of the first difference, if any.
    static func judge(_ sequence: [String], _ proposed: Stakes, _ policy: PolicyDocument, _ device: DeviceCase,
                      _ verified: Bool) -> String? {
        var predictor = Predictor(proposed: proposed.rawValue, raise: policy.raise.first?.stakes.rawValue,
                                  verificationStakes: Set(policy.userVerification.map(\.rawValue)))
        let input = proposal("a1", stakes: proposed)
        let proposedEvent = Event(seq: 1, at: t0, actor: "specialist:Sasha", commandId: "c0", org: "quinn-co",
                                  person: "quinn", actionId: "a1", payload: .proposed(input.proposal))
        var state = ActionState(proposed: proposedEvent, proposal: input.proposal)
        for (i, step) in sequence.enumerated() {
            let expected = predictor.tap(step, device: device, verified: verified)
            let got: Outcome
            do {
                switch try Policy.judgeTap(TapStep(rawValue: step)!, on: state, device: deviceState(device), deviceId: device.rawValue,
                                           seenContent: nil, userVerified: verified, proof: .of(nil, userVerified: verified),
                                           policy: policy, now: t0) {
                case .duplicate:
                    got = .duplicate
                case .accept(let rule, let stakes):
                    got = .accepted(rule: step == "approve" ? rule : nil)
                    let payload: Payload = switch step {
                    case "review": .reviewed(Tap(contentHash: state.contentHash, policyVersion: policy.version))
                    case "confirm": .confirmed(Tap(contentHash: state.contentHash, policyVersion: policy.version))
                    default: .approved(Approval(contentHash: state.contentHash, policyVersion: policy.version, rule: rule,
                                                stakes: stakes, userVerified: verified))
                    }
                    state.apply(Event(seq: UInt64(i + 2), at: t0, actor: "quinn", device: device.rawValue, commandId: "c\(i + 1)",
                                      org: "quinn-co", person: "quinn", actionId: "a1", payload: payload))
                }
            } catch let e as LedgerError {
                got = .refused(code: e.code.rawValue, nextTap: nextTapDetail(e))
            } catch {
                return "tap \(i + 1) threw \(error)"
            }
            if got != expected { return "tap \(i + 1) (\(step)): expected \(expected), got \(got)" }
            let next = Policy.nextTap(state, under: policy)?.rawValue
            if next != predictor.next { return "after tap \(i + 1): next tap \(next ?? "none"), expected \(predictor.next ?? "none")" }
        }
        return nil
    }

    static func nextTapDetail(_ e: LedgerError) -> String? {
        if case .string(let s)? = e.details["next_tap"] { return s }
        return nil
    }
}
