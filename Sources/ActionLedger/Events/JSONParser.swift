/// A strict JSON parser over bytes (RFC 8259): refuses invalid UTF-8, lone surrogates,
/// duplicate keys, trailing data, nesting deeper than ``maxDepth`` and documents larger
/// than ``maxBytes``. Errors name the line and column.
public struct JSONParser {
    /// Largest document accepted, in bytes (one proposal or one JSONL line).
    public static let maxBytes = 1 << 20
    /// Deepest nesting accepted.
    public static let maxDepth = 32

    private let bytes: [UInt8]
    private var i = 0
    private var depth = 0
    private var depthLimit = JSONParser.maxDepth

    /// Parses one complete JSON document.
    /// - parameter depthLimit: the deepest nesting taken: ``maxDepth`` for a document; an
    ///   export line holds a document (an outcome) two levels down (the line, its `data`).
    /// - throws: ``LedgerError`` with code `invalid_input`.
    public static func parse(_ bytes: some Collection<UInt8>, depthLimit: Int = maxDepth) throws -> JSON {
        guard bytes.count <= maxBytes else {
            throw LedgerError(.invalidInput, "document is \(bytes.count) bytes; the limit is \(maxBytes)")
        }
        var p = JSONParser(bytes: Array(bytes))
        p.depthLimit = depthLimit
        p.skipSpace()
        let value = try p.value()
        p.skipSpace()
        guard p.i == p.bytes.count else { throw p.fail("unexpected data after the JSON value") }
        return value
    }

    /// Parses JSON text.
    public static func parse(_ text: String) throws -> JSON { try parse(Array(text.utf8)) }

    private func fail(_ what: String) -> LedgerError {
        var line = 1, column = 1
        for b in bytes[..<min(i, bytes.count)] {
            if b == 0x0A { line += 1; column = 1 } else { column += 1 }
        }
        return LedgerError(.invalidInput, "malformed JSON at line \(line), column \(column): \(what)")
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func value() throws -> JSON {
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: String) throws {
        for b in word.utf8 {
            guard i < bytes.count, bytes[i] == b else { throw fail("invalid literal") }
            i += 1
        }
    }

    private mutating func nest() throws {
        depth += 1
        if depth > depthLimit { throw fail("nesting deeper than \(depthLimit)") }
    }

    private mutating func object() throws -> JSON {
        try nest()
        i += 1
        var members = JSONObject()
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return .object(members) }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try string()
            if members[key] != nil { throw fail("duplicate key \"\(key)\"") }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            members.pairs.append((key, try value()))
            skipSpace()
            guard i < bytes.count else { throw fail("unterminated object") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; break }
            throw fail("expected ',' or '}'")
        }
        depth -= 1
        return .object(members)
    }

    private mutating func array() throws -> JSON {
        try nest()
        i += 1
        var items: [JSON] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; depth -= 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value())
            skipSpace()
            guard i < bytes.count else { throw fail("unterminated array") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; break }
            throw fail("expected ',' or ']'")
        }
        depth -= 1
        return .array(items)
    }

    private mutating func number() throws -> Double {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        func digits() -> Int {
            let s = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            return i - s
        }
        let intStart = i
        let n = digits()
        guard n > 0 else { throw fail("invalid number") }
        if n > 1, bytes[intStart] == 0x30 { throw fail("leading zero in number") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { throw fail("invalid number") }
        }
        let mantissaEnd = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw fail("invalid number") }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw fail("number out of range") }
        // A nonzero literal too small for a double (1e-400) reads as zero, which would pass a
        // whole-number or lower-bound check as a value nobody wrote: refused like 1e400.
        if value == 0, bytes[start..<mantissaEnd].contains(where: { $0 >= 0x31 && $0 <= 0x39 }) {
            throw fail("number out of range")
        }
        return value
    }

    private mutating func string() throws -> String {
        i += 1
        // Fast path: most strings have no escapes; validate the run once and return it.
        var j = i
        while j < bytes.count, bytes[j] != UInt8(ascii: "\""), bytes[j] != UInt8(ascii: "\\"), bytes[j] >= 0x20 { j += 1 }
        if j < bytes.count, bytes[j] == UInt8(ascii: "\"") {
            guard let s = bytes.withUnsafeBufferPointer({ String(validating: $0[i..<j], as: UTF8.self) }) else {
                throw fail("invalid UTF-8 in string")
            }
            i = j + 1
            return s
        }
        var scalars = String.UnicodeScalarView()
        var runStart = i
        func flushRun(_ end: Int) throws {
            guard end > runStart else { return }
            guard let s = String(validating: bytes[runStart..<end], as: UTF8.self) else {
                throw fail("invalid UTF-8 in string")
            }
            scalars.append(contentsOf: s.unicodeScalars)
        }
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                try flushRun(i)
                i += 1
                return String(scalars)
            }
            if b < 0x20 { throw fail("control character in string") }
            if b == UInt8(ascii: "\\") {
                try flushRun(i)
                i += 1
                guard i < bytes.count else { throw fail("unterminated escape") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"): scalars.append(try unicodeEscape())
                default: throw fail("invalid escape")
                }
                runStart = i
                continue
            }
            i += 1
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16)
        else { throw fail("invalid \\u escape") }
        i += 4
        return v
    }

    private mutating func unicodeEscape() throws -> Unicode.Scalar {
        let high = try hex4()
        if (0xDC00...0xDFFF).contains(high) { throw fail("lone low surrogate") }
        if (0xD800...0xDBFF).contains(high) {
            guard i + 2 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                throw fail("lone high surrogate")
            }
            i += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair") }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
        }
        return Unicode.Scalar(high)!
    }
}
