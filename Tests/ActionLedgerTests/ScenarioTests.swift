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

    /// Rule ids and refusal codes every scenario set must cover, read from Specs/policy.md
    /// (``PolicySpec``), never a copied list.
    static func requiredCoverage() throws -> (rules: [String], codes: [String]) {
        (try PolicySpec.ruleIds(), try PolicySpec.refusalCodes())
    }

    @Test func scenariosCoverEveryRuleAndRefusal() throws {
        let files = ScenarioRunner.files()
        #expect(files.count >= 30, "Specs/scenarios has \(files.count) scenarios; the contract asks for at least 30")
        let (rules, codes) = try Self.requiredCoverage()
        let required = rules + codes
        var covered: Set<String> = []
        for file in files {
            guard case .array(let ids)? = try ScenarioRunner.load(file)["covers"] else {
                Issue.record("\(file) has no \"covers\" list")
                continue
            }
            for case .string(let id) in ids { covered.insert(id) }
        }
        let missing = required.filter { !covered.contains($0) }
        #expect(missing.isEmpty, "no scenario covers: \(missing.joined(separator: ", "))")
        // Every id a scenario claims must be one the policy table defines.
        let unknown = covered.subtracting(required).sorted()
        #expect(unknown.isEmpty, "scenarios cover ids Specs/policy.md does not define: \(unknown.joined(separator: ", "))")
    }

    /// The parse of Specs/policy.md found its tables (a reformatted document fails here
    /// rather than shrinking what must be covered), and the code records the decision rule
    /// ids and refusal codes the document defines.
    @Test func policyTableNamesEveryRule() throws {
        let (rules, codes) = try Self.requiredCoverage()
        #expect(rules.count >= 30, "only \(rules.count) rule ids read from Specs/policy.md: \(rules)")
        #expect(codes.count >= 10, "only \(codes.count) refusal codes read from Specs/policy.md: \(codes)")
        let decisionRules = [Policy.Rule.lowOneTap, Policy.Rule.mediumTwoTaps, Policy.Rule.highThreeTaps, Policy.Rule.autoShip, Policy.Rule.dismiss]
        let undefined = decisionRules.filter { !rules.contains($0) }
        #expect(undefined.isEmpty, "Specs/policy.md does not define the code's decision rules: \(undefined.joined(separator: ", "))")
        let known = Set(LedgerError.Code.all.map(\.rawValue))
        #expect(codes.allSatisfy(known.contains), "Specs/policy.md lists codes the engine does not have: \(codes.filter { !known.contains($0) })")
        for id in rules {
            #expect(id.allSatisfy { $0.isLowercase || $0 == "." || $0 == "_" }, "not a rule id: \(id)")
        }
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
