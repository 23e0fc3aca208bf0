@testable import ActionLedger

/// Structured and byte-level mutations of JSON documents for the hostile-input properties.
/// Deterministic from a seed, so a failing case can be replayed.
struct JSONMutator {
    var rng: SeededRandom

    /// Every object member's path (arrays are leaves), skipping `skip` prefixes.
    static func paths(_ json: JSON, _ prefix: [String] = [], skip: [String] = []) -> [[String]] {
        guard case .object(let o) = json else { return [] }
        var out: [[String]] = []
        for (k, v) in o.pairs {
            let p = prefix + [k]
            if skip.contains(p.joined(separator: ".")) { continue }
            out.append(p)
            out += paths(v, p, skip: skip)
        }
        return out
    }

    static func get(_ json: JSON, _ path: [String]) -> JSON? {
        path.reduce(Optional(json)) { $0?[$1] }
    }

    /// `json` with the member at `path` replaced (nil removes it).
    static func set(_ json: JSON, _ path: [String], _ value: JSON?) -> JSON {
        guard case .object(var o) = json, let first = path.first else { return value ?? .null }
        if path.count == 1 {
            o[first] = value
            if value == nil, let i = o.pairs.firstIndex(where: { $0.0 == first }) { o.pairs.remove(at: i) }
        } else if let child = o[first] {
            o[first] = set(child, Array(path.dropFirst()), value)
        }
        return .object(o)
    }

    /// A value of another JSON type than `v` (never null, which means "absent" for optional fields).
    mutating func otherType(_ v: JSON) -> JSON {
        let choices: [JSON]
        switch v {
        case .string: choices = [7, true, [], ["x": 1]]
        case .number: choices = ["7", false, [1], [:]]
        case .bool: choices = [1, "true", []]
        case .array: choices = ["x", 3, ["k": "v"]]
        case .object: choices = ["x", 3, [1, 2], false]
        case .null: choices = [5, true, ["a"], ["k": 1]]
        }
        return choices[rng.int(choices.count)]
    }

    /// A string over every documented size limit (16 KiB of text is the largest).
    mutating func hugeString() -> JSON {
        .string(String(repeating: ["a", "é", "🙂"][rng.int(3)], count: 16_385 + rng.int(5000)))
    }

    /// A byte-level mutation: truncation, a random byte, or invalid UTF-8 spliced in.
    mutating func bytes(_ text: [UInt8]) -> [UInt8] {
        var b = text
        switch rng.int(4) {
        case 0:
            b = Array(b.prefix(rng.int(max(b.count, 1))))
        case 1:
            b[rng.int(b.count)] = UInt8(truncatingIfNeeded: rng.next())
        case 2:
            let bad: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC0, 0xAF], [0x80]]
            b.insert(contentsOf: bad[rng.int(bad.count)], at: rng.int(b.count + 1))
        default:
            b.remove(at: rng.int(b.count))
        }
        return b
    }
}


/// The outcome of feeding input to a parser: accepted, or refused with a code and field.
enum Verdict: Equatable {
    case accepted
    case refused(code: String, field: String?, line: Int?)

    static func of(_ body: () throws -> Void) -> Verdict {
        do {
            try body()
            return .accepted
        } catch let e as LedgerError {
            var field: String?, line: Int?
            if case .string(let f)? = e.details["field"] { field = f }
            if case .number(let n)? = e.details["line"] { line = Int(n) }
            return .refused(code: e.code.rawValue, field: field, line: line)
        } catch {
            return .refused(code: "unexpected: \(error)", field: nil, line: nil)
        }
    }

    var code: String? { if case .refused(let c, _, _) = self { c } else { nil } }
    var field: String? { if case .refused(_, let f, _) = self { f } else { nil } }
    var line: Int? { if case .refused(_, _, let l) = self { l } else { nil } }
}

extension SeededRandom {
    /// A number in 0..<n (0 when n ≤ 1).
    mutating func int(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
}
