import Foundation
@testable import ActionLedger

/// Runs one file of Specs/scenarios on a fresh LMDB store: appends the `given` events
/// verbatim, executes the `when` command through the engine and returns every way the
/// outcome differs from `then` (empty when the scenario holds).
struct ScenarioRunner {
    /// Specs/scenarios, found from this file's place in the repository.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // Support
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()  // repo root
        .appendingPathComponent("Specs/scenarios")

    /// The scenario files, sorted.
    static func files() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }

    static func load(_ file: String) throws -> JSONObject {
        let data = try Data(contentsOf: directory.appendingPathComponent(file))
        guard case .object(let o) = try JSONParser.parse(data) else { throw ScenarioError("not a JSON object") }
        return o
    }

    static let topKeys: Set = ["name", "description", "covers", "given", "when", "then"]
    static let thenKeys: Set = ["events", "error", "details", "replayed", "duplicate_tap", "action"]

    /// Runs `file`; returns the differences from what it expects.
    static func run(_ file: String) throws -> [String] {
        let s = try load(file)
        if let extra = s.keys.first(where: { !topKeys.contains($0) }) { throw ScenarioError("unknown key \"\(extra)\"") }
        guard case .array(let given)? = s["given"] else { throw ScenarioError("\"given\" must be an array") }
        guard case .object(let whenObject)? = s["when"] else { throw ScenarioError("\"when\" must be an object") }
        guard case .object(let then)? = s["then"] else { throw ScenarioError("\"then\" must be an object") }
        if let extra = then.keys.first(where: { !thenKeys.contains($0) }) { throw ScenarioError("unknown key then.\(extra)") }
        guard (then["error"] == nil) != (then["events"] == nil) else {
            throw ScenarioError("\"then\" needs exactly one of \"events\" and \"error\"")
        }

        let temp = try TempLedger()
        let ledger = temp.ledger!
        var fill = ScenarioFill()
        let events = try given.map { try fill.fill($0) }
        do {
            try ledger.append(verbatim: events.map { ($0, nil) })
        } catch let e as LedgerError {
            throw ScenarioError("the given events were refused: \(e.code): \(e.message)")
        }
        let request = try ScenarioCommand.request(try fill.resolve(.object(whenObject)))
        let before = try ledger.read { try $0.head().seq }
        let outcome: Result<CommandResult, LedgerError>
        do {
            outcome = .success(try ledger.execute(request))
        } catch let e as LedgerError {
            outcome = .failure(e)
        }
        let after = try ledger.read { try $0.head().seq }
        guard case .object(let expected) = try fill.resolve(.object(then)) else { return ["then is not an object"] }
        return check(outcome, expected, appended: after - before, request: request, ledger: ledger)
    }

    static func check(_ outcome: Result<CommandResult, LedgerError>, _ then: JSONObject, appended: UInt64,
                      request: CommandRequest, ledger: Ledger) -> [String] {
        var problems: [String] = []
        switch outcome {
        case .failure(let e):
            guard case .string(let code)? = then["error"] else {
                return ["expected events, got error \(e.code): \(e.message)"]
            }
            if e.code.rawValue != code { problems.append("expected error \(code), got \(e.code): \(e.message)") }
            if case .object(let details)? = then["details"] {
                problems += match(.object(e.details), .object(details), path: "details")
            }
            if appended != 0 { problems.append("a refused command appended \(appended) events") }
        case .success(let r):
            guard case .array(let expected)? = then["events"] else {
                let got = r.events.map { $0.event.type.name }.joined(separator: ", ")
                return ["expected error \(then["error"]?.serialized() ?? "?"), but the command succeeded with [\(got)]"]
            }
            if r.events.count != expected.count {
                problems.append("expected \(expected.count) events, got \(r.events.count): "
                    + r.events.map { $0.event.json().serialized() }.joined(separator: " "))
            } else {
                for (i, (got, want)) in zip(r.events, expected).enumerated() {
                    problems += match(got.event.json(), want, path: "events[\(i)]")
                }
            }
            if appended != (r.replayed ? 0 : UInt64(r.events.count)) {
                problems.append("the log grew by \(appended) but the result reports \(r.events.count) events (replayed: \(r.replayed))")
            }
            if case .bool(let b)? = then["replayed"], b != r.replayed { problems.append("replayed: expected \(b), got \(r.replayed)") }
            if case .bool(let b)? = then["duplicate_tap"], b != r.duplicateTap {
                problems.append("duplicate_tap: expected \(b), got \(r.duplicateTap)")
            }
            if case .object(let a)? = then["action"] {
                var got = JSONObject()
                if let s = r.action {
                    got["state"] = .string(s.displayState(now: request.now))
                    got["next_tap"] = r.nextTap.map { .string($0.rawValue) } ?? .null
                    got["taps"] = .number(Double(s.taps.count))
                }
                problems += match(.object(got), .object(a), path: "action")
            }
        }
        return problems
    }

    /// Field-by-field comparison: every member `want` names must be in `got` and match;
    /// members it does not name are not compared. Arrays match element by element.
    static func match(_ got: JSON, _ want: JSON, path: String) -> [String] {
        switch (got, want) {
        case (.object(let g), .object(let w)):
            return w.pairs.flatMap { key, value -> [String] in
                guard let gv = g[key] else { return ["\(path).\(key): missing (expected \(value.serialized()))"] }
                return match(gv, value, path: "\(path).\(key)")
            }
        case (.array(let g), .array(let w)):
            guard g.count == w.count else { return ["\(path): expected \(w.count) items, got \(got.serialized())"] }
            return zip(g, w).enumerated().flatMap { i, p in match(p.0, p.1, path: "\(path)[\(i)]") }
        default:
            return got == want ? [] : ["\(path): expected \(want.serialized()), got \(got.serialized())"]
        }
    }
}
