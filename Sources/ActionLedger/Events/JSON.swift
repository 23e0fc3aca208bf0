/// A JSON value with ordered object keys, so that output keeps the documented key order.
///
/// ActionLedger parses and prints JSON itself (``JSONParser``, ``JSON/serialized()``)
/// instead of through Foundation: hostile input must be refused precisely (invalid UTF-8,
/// duplicate keys, depth, size), and the printed form of an event must be exactly
/// reproducible for export verification.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// Field lookup on an object; nil for other values or a missing key.
    public subscript(key: String) -> JSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// Compact JSON text (no spaces), keys in stored order.
    public func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Indented JSON text for people.
    public func pretty(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent + 1), end = String(repeating: "  ", count: indent)
        switch self {
        case .array(let items) where !items.isEmpty:
            return "[\n" + items.map { pad + $0.pretty(indent: indent + 1) }.joined(separator: ",\n") + "\n\(end)]"
        case .object(let o) where !o.pairs.isEmpty:
            return "{\n" + o.pairs.map { pad + JSON.quote($0.0) + ": " + $0.1.pretty(indent: indent + 1) }
                .joined(separator: ",\n") + "\n\(end)}"
        default:
            return serialized()
        }
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += JSON.format(n)
        case .string(let s): out += JSON.quote(s)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, (k, v)) in o.pairs.enumerated() {
                if i > 0 { out += "," }
                out += JSON.quote(k)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }

    /// Integral values print without a fraction; others use Swift's shortest round-trip
    /// form, so parsing the text gives back the identical Double.
    static func format(_ n: Double) -> String {
        // A negative zero keeps its sign: as `0` it would parse back to other bits, and an export
        // of a store holding one (written by an earlier build) would not hash to its chain.
        if n == 0, n.sign == .minus { return "-0.0" }
        if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
        return "\(n)"
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A JSON object's members in order. Lookup is linear: event objects have few keys.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public var pairs: [(String, JSON)]

    public init(_ pairs: [(String, JSON)] = []) { self.pairs = pairs }
    public init(dictionaryLiteral elements: (String, JSON)...) { pairs = elements }

    public subscript(key: String) -> JSON? {
        get { pairs.first { $0.0 == key }?.1 }
        set {
            if let i = pairs.firstIndex(where: { $0.0 == key }) {
                if let newValue { pairs[i].1 = newValue } else { pairs.remove(at: i) }
            } else if let newValue {
                pairs.append((key, newValue))
            }
        }
    }

    public var keys: [String] { pairs.map(\.0) }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.pairs.count == b.pairs.count && zip(a.pairs, b.pairs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(JSONObject(elements)) }
    public init(nilLiteral: ()) { self = .null }
}
