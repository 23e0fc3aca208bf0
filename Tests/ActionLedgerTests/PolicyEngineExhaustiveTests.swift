import Testing
@testable import ActionLedger

/// The exhaustive table end to end: every stakes × tap sequence up to four taps × device
/// state × user verification, through ``Ledger/execute(group:)`` on a real LMDB store
/// under the default policy. Each tap round is one group commit, so the 2,880 sequences
/// take five durable commits rather than ten thousand.
@Suite struct PolicyEngineExhaustiveTests {
    typealias T = PolicyExhaustiveTests

    struct Case {
        let actionId: String
        let stakes: Stakes
        let sequence: [String]
        let device: T.DeviceCase
        let verified: Bool
        var predictor: T.Predictor
        var accepted: [EventType] = []
    }

    @Test func everyTapSequenceThroughTheEngine() throws {
        let temp = try TempLedger()
        let ledger = temp.ledger!
        try ledger.link("own-phone")
        try ledger.link("revoked-phone")
        try ledger.run(.revokeDevice(device: "revoked-phone", reason: "lost"))
        try ledger.link("mia-phone", person: "mia")

        var cases: [Case] = []
        for stakes in Stakes.allCases {
            for device in T.DeviceCase.allCases {
                for verified in [false, true] {
                    for sequence in T.sequences {
                        cases.append(Case(actionId: "a\(cases.count)", stakes: stakes, sequence: sequence, device: device,
                                          verified: verified,
                                          predictor: T.Predictor(proposed: stakes.rawValue, raise: nil, verificationStakes: ["high"])))
                    }
                }
            }
        }
        #expect(cases.count == 3 * 4 * 2 * 120)
        let proposed = try ledger.execute(group: cases.map {
            CommandRequest(.propose(proposal($0.actionId, stakes: $0.stakes)), now: t0)
        })
        #expect(proposed.allSatisfy { (try? $0.get().events.count) == 1 }, "every proposal is recorded and none auto-ships")

        var mismatches: [String] = []
        for round in 0..<4 {
            let active = cases.indices.filter { cases[$0].sequence.count > round }
            let requests = active.map { i in
                let c = cases[i]
                return CommandRequest(.tap(TapStep(rawValue: c.sequence[round])!, actionId: c.actionId, device: c.device.rawValue,
                                           userVerified: c.verified), now: t0.adding(milliseconds: Int64(round + 1) * 1000))
            }
            for (i, result) in zip(active, try ledger.execute(group: requests)) {
                let step = cases[i].sequence[round]
                let expected = cases[i].predictor.tap(step, device: cases[i].device, verified: cases[i].verified)
                let got: T.Outcome
                switch result {
                case .success(let r) where r.duplicateTap:
                    got = r.events.isEmpty ? .duplicate : .accepted(rule: "duplicate with events")
                case .success(let r):
                    if case .approved(let a)? = r.events.first?.event.payload {
                        got = .accepted(rule: a.rule)
                    } else {
                        got = .accepted(rule: nil)
                    }
                    cases[i].accepted += r.events.map(\.event.type)
                case .failure(let e):
                    got = .refused(code: e.code.rawValue, nextTap: T.nextTapDetail(e))
                }
                if got != expected {
                    let c = cases[i]
                    mismatches.append("\(c.stakes) \(c.device) verified=\(c.verified) \(c.sequence) tap \(round + 1): "
                        + "expected \(expected), got \(got)")
                }
            }
        }
        #expect(mismatches.count == 0, "\(mismatches.count) taps differ, e.g.:\n\(mismatches.prefix(10).joined(separator: "\n"))")

        // The log holds exactly the accepted taps, in order, and each action's state agrees.
        try ledger.read { reader in
            for c in cases {
                let types = try reader.actionEvents(c.actionId).map(\.event.type)
                #expect(types == [.actionProposed] + c.accepted, "\(c.actionId) \(c.stakes) \(c.device) \(c.sequence)")
                let state = try reader.actionState(c.actionId)
                #expect((state?.status == .approved) == c.predictor.decided)
            }
        }
    }
}
