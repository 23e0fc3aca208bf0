@testable import ActionLedger


/// Random but mostly valid commands: several persons and devices, proposals of every
/// stakes, taps (some refused), edits, holds, dismissals, expiries, outcomes, devices
/// linked and revoked mid-way, and policy changes. Time only moves forward.
struct RandomWorkload {
    var rng: SeededRandom
    var now = at("2026-11-20T08:00:00Z")
    let persons = ["quinn", "mia", "ava"]
    var devices: [String: [String]] = [:]
    var actions: [(id: String, person: String)] = []
    var nextDevice = 0
    var nextAction = 0
    var policyVersion: UInt32 = 0

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func minutes(_ r: ClosedRange<Int64>) -> Int64 { Int64.random(in: r, using: &rng) * 60_000 }

    /// The set-up: two devices per person.
    mutating func setUp() -> [CommandRequest] {
        persons.flatMap { p in [link(p), link(p)] }
    }

    mutating func link(_ person: String) -> CommandRequest {
        nextDevice += 1
        let id = "dev-\(nextDevice)"
        devices[person, default: []].append(id)
        return CommandRequest(.linkDevice(device: id, person: person, org: "org", label: "Device \(nextDevice)",
                                          platform: pick(Platform.allCases)), now: now)
    }

    mutating func next() -> CommandRequest {
        now = now.adding(milliseconds: minutes(0...9) + Int64.random(in: 0...999, using: &rng))
        let roll = Double.random(in: 0..<1, using: &rng)
        if actions.isEmpty || roll < 0.28 { return propose() }
        let (id, person) = pick(Array(actions.suffix(40)))
        // Mostly the person's own devices; sometimes another's (refused: not owned).
        let device = chance(0.95) ? pick(devices[person]!) : pick(devices[pick(persons)]!)
        switch roll {
        case ..<0.62:
            return CommandRequest(.tap(pick(TapStep.allCases), actionId: id, device: device,
                                       userVerified: chance(0.8)), now: now)
        case ..<0.67: return CommandRequest(.dismiss(actionId: id, device: device, reason: "not now"), now: now)
        case ..<0.73: return CommandRequest(.edit(actionId: id, device: device, text: "edit \(nextAction)-\(roll)"), now: now)
        case ..<0.81:
            return CommandRequest(.hold(actionId: id, device: device, until: now.adding(milliseconds: minutes(1...300))), now: now)
        case ..<0.85: return CommandRequest(.expire(actionId: id), now: now)
        case ..<0.91:
            return CommandRequest(.recordOutcome(actionId: id, succeeded: chance(0.8), outcome: ["ok": true]), now: now)
        case ..<0.94: return link(pick(persons))
        case ..<0.96:
            let person = pick(persons)
            // Keep one device per person so that the workload goes on.
            guard let d = devices[person], d.count > 1 else { return link(person) }
            let victim = pick(d)
            devices[person] = d.filter { $0 != victim }
            return CommandRequest(.revokeDevice(device: victim, reason: "lost"), now: now)
        default:
            return setPolicy()
        }
    }

    mutating func propose() -> CommandRequest {
        nextAction += 1
        let person = pick(persons)
        let id = "a\(nextAction)"
        actions.append((id, person))
        let expires: Timestamp? = chance(0.25) ? now.adding(milliseconds: minutes(5...240)) : nil
        let input = ProposalInput(
            actionId: id, org: "org", person: person,
            proposal: Proposal(specialist: pick([Specialist(name: "Sasha", agent: "content"), Specialist(name: "Mia", agent: "engage"),
                                                 Specialist(name: "Lena", agent: "dm")]),
                               surface: pick(["onlyfans", "x", "instagram"]), kind: pick(["publish_post", "send_reply", "send_dm"]),
                               target: Target(type: "account", id: "t"), stakes: pick(Stakes.allCases),
                               confidence: Double(Int.random(in: 40...100, using: &rng)) / 100,
                               preview: Preview(text: "draft \(nextAction)", assets: Int.random(in: 0...3, using: &rng)),
                               rationale: "now is good", expiresAt: expires))
        return CommandRequest(.propose(input), now: now)
    }

    mutating func setPolicy() -> CommandRequest {
        var raise: [PolicyDocument.StakesRaise] = []
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            raise.append(.init(kind: chance(0.6) ? pick(["publish_post", "send_reply", "send_dm"]) : nil,
                               surface: chance(0.5) ? pick(["onlyfans", "x", "instagram"]) : nil,
                               stakes: pick([Stakes.medium, .high])))
        }
        let doc = PolicyDocument(version: 0, autoShip: .init(enabled: chance(0.8), confidenceFloor: pick([0.7, 0.8, 0.9]),
                                                              dailyCap: pick([3, 10, 50])),
                                 userVerification: chance(0.5) ? [.high] : [], raise: raise)
        return CommandRequest(.setPolicy(doc, org: "org"), now: now)
    }
}
