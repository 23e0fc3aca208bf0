import ActionLedger
import Hummingbird

/// Reads a request's JSON object strictly: known keys only, each of its expected type, a
/// refusal naming the field (400 `invalid_input`), as the engine reads its own input.
struct Fields {
    private let object: JSONObject

    /// `allowed`: every key the endpoint knows; any other is refused.
    init(_ json: JSON?, allowed: Set<String>) throws {
        guard let json else {
            object = JSONObject()
            return
        }
        guard case .object(let o) = json else { throw Problem.invalid("the body must be a JSON object") }
        for (k, _) in o.pairs where !allowed.contains(k) { throw Problem.invalid("unknown field \(k)", field: k) }
        object = o
    }

    func raw(_ key: String) -> JSON? {
        guard let v = object[key], v != .null else { return nil }
        return v
    }

    /// Whether `key` is present with the value null (which ``raw(_:)`` reads as absent).
    func isNull(_ key: String) -> Bool { object[key] == .null }

    func string(_ key: String) throws -> String? {
        guard let v = raw(key) else { return nil }
        guard case .string(let s) = v else { throw Problem.invalid("\(key): expected a string", field: key) }
        return s
    }

    func bool(_ key: String) throws -> Bool? {
        guard let v = raw(key) else { return nil }
        guard case .bool(let b) = v else { throw Problem.invalid("\(key): expected true or false", field: key) }
        return b
    }

    func time(_ key: String) throws -> Timestamp? {
        guard let s = try string(key) else { return nil }
        guard let t = Timestamp(iso8601: s) else { throw Problem.invalid("\(key): expected an ISO-8601 time", field: key) }
        return t
    }

    func require<T>(_ key: String, _ read: (String) throws -> T?) throws -> T {
        guard let v = try read(key) else { throw Problem.invalid("\(key) is required", field: key) }
        return v
    }

    /// A required member that must be an identifier (events.md: 1–128 bytes of a safe set).
    func identifier(_ key: String) throws -> String {
        let value = try require(key, string)
        if let bad = Identifier.problem(value) { throw Problem.invalid("\(key) \(bad)", field: key) }
        return value
    }
}

/// Query parameters, read the same way.
struct Query {
    let request: Request
    /// The largest seq a query takes: 2^53 − 1, exact in every JSON client.
    static let maxSeq = 9_007_199_254_740_991

    func string(_ key: String) -> String? { request.uri.queryParameters.get(key) }

    /// Refuses a query parameter given twice: which one counted would be the parser's choice
    /// (the first had been used, silently), and no parameter here is a list given by repeating.
    static func refuseRepeated(_ request: Request) throws {
        var seen: Set<Substring> = []
        for (key, _) in request.uri.queryParameters where !seen.insert(key).inserted {
            throw Problem.invalid("\(key) is given more than once: give it once", field: String(key))
        }
    }

    func int(_ key: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let s = string(key) else { return value }
        // `Int` alone takes "+5": an integer here is an optional minus and digits, nothing else.
        guard s.utf8.dropFirst(s.hasPrefix("-") ? 1 : 0).allSatisfy({ (0x30...0x39).contains($0) }), let n = Int(s), range.contains(n) else {
            throw Problem.invalid("\(key): expected an integer in \(range.lowerBound)…\(range.upperBound)", field: key)
        }
        return n
    }

    func time(_ key: String) throws -> Timestamp? {
        guard let s = string(key) else { return nil }
        guard let t = Timestamp(iso8601: s) else { throw Problem.invalid("\(key): expected an ISO-8601 time", field: key) }
        return t
    }

    /// `24h`, `90m`, `7d`, `30s` in milliseconds.
    func duration(_ key: String) throws -> Int64? {
        guard let s = string(key) else { return nil }
        guard let ms = DurationText.milliseconds(s) else {
            throw Problem.invalid("\(key): expected a duration such as 24h, 90m or 7d", field: key)
        }
        return ms
    }
}
