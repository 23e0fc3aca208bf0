import Foundation
import Testing
@testable import ActionLedger

/// Runs every file of Specs/scenarios, each on a fresh real LMDB store, and checks that
/// together they cover every rule and refusal code of Specs/policy.md.
@Suite struct ScenarioTests {
    @Test(arguments: ScenarioRunner.files())
    func scenario(_ file: String) throws {
        let problems: [String]
        do {
            problems = try ScenarioRunner.run(file)
        } catch let e as ScenarioError {
            Issue.record("scenario \(file) cannot run: \(e)")
            return
        }
        let name = (try? ScenarioRunner.load(file))?["name"]?.serialized() ?? "?"
        #expect(problems.count == 0, "scenario \(file) (\(name)) failed:\n  \(problems.joined(separator: "\n  "))")
    }

    /// Rule ids and refusal codes every scenario set must cover: the decision rules come
    /// from the code itself; the other ids are the ones Specs/policy.md defines.
    static let requiredCoverage: [String] = [
        Policy.Rule.lowOneTap, Policy.Rule.mediumTwoTaps, Policy.Rule.highThreeTaps, Policy.Rule.autoShip, Policy.Rule.dismiss,
        "path.in_order", "path.no_such_step", "tap.duplicate", "tap.cross_device", "tap.content_bound", "edit.voids_taps",
        "device.linked_own", "device.unknown", "device.revoked", "device.not_owned",
        "user_verification.required", "user_verification.policy",
        "auto_ship.floor", "auto_ship.cap", "auto_ship.disabled", "auto_ship.low_only",
        "stakes.raise", "stakes.never_lowered", "stakes.current_policy",
        "decision.first_wins", "decision.policy_version", "hold.snooze", "expiry", "command.replay",
        "action.duplicate", "action.unknown", "outcome.after_decision",
        LedgerError.Code.tapsRequired.rawValue, LedgerError.Code.userVerificationRequired.rawValue,
        LedgerError.Code.alreadyDecided.rawValue, LedgerError.Code.staleContent.rawValue,
        LedgerError.Code.deviceRevoked.rawValue, LedgerError.Code.unknownDevice.rawValue,
        LedgerError.Code.deviceNotOwned.rawValue, LedgerError.Code.duplicateAction.rawValue,
        LedgerError.Code.actionExpired.rawValue, LedgerError.Code.unknownAction.rawValue,
        LedgerError.Code.notApproved.rawValue,
    ]

    @Test func scenariosCoverEveryRuleAndRefusal() throws {
        let files = ScenarioRunner.files()
        #expect(files.count >= 30, "Specs/scenarios has \(files.count) scenarios; the contract asks for at least 30")
        var covered: Set<String> = []
        for file in files {
            guard case .array(let ids)? = try ScenarioRunner.load(file)["covers"] else {
                Issue.record("\(file) has no \"covers\" list")
                continue
            }
            for case .string(let id) in ids { covered.insert(id) }
        }
        let missing = ScenarioTests.requiredCoverage.filter { !covered.contains($0) }
        #expect(missing.isEmpty, "no scenario covers: \(missing.joined(separator: ", "))")
        // Every id a scenario claims must be one the policy table defines.
        let unknown = covered.subtracting(ScenarioTests.requiredCoverage).sorted()
        #expect(unknown.isEmpty, "scenarios cover ids Specs/policy.md does not define: \(unknown.joined(separator: ", "))")
    }

    @Test func policyTableNamesEveryRule() throws {
        let url = ScenarioRunner.directory.deletingLastPathComponent().appendingPathComponent("policy.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let absent = ScenarioTests.requiredCoverage.filter { !text.contains("`\($0)`") }
        #expect(absent.isEmpty, "Specs/policy.md does not define: \(absent.joined(separator: ", "))")
    }

    /// The runner itself must be able to fail: a scenario whose `then` is wrong is reported.
    @Test func aWrongExpectationIsReported() throws {
        let temp = try TempLedger()
        try temp.ledger.link("iphone")
        try temp.ledger.run(.propose(proposal("a1", stakes: .medium)))
        let request = CommandRequest(.tap(.approve, actionId: "a1", device: "iphone"), now: t0)
        let outcome: Result<CommandResult, LedgerError>
        do { outcome = .success(try temp.ledger.execute(request)) } catch let e as LedgerError { outcome = .failure(e) }
        let wrongCode = ScenarioRunner.check(outcome, ["error": "already_decided"], appended: 0, request: request, ledger: temp.ledger)
        #expect(wrongCode.count == 1)
        let wrongDetail = ScenarioRunner.check(outcome, ["error": "taps_required", "details": ["next_tap": "confirm"]],
                                               appended: 0, request: request, ledger: temp.ledger)
        #expect(wrongDetail == ["details.next_tap: expected \"confirm\", got \"review\""])
        let right = ScenarioRunner.check(outcome, ["error": "taps_required", "details": ["next_tap": "review"]],
                                         appended: 0, request: request, ledger: temp.ledger)
        #expect(right.isEmpty)
    }
}
