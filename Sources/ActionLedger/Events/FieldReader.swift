/// Reads a JSON object field by field for input validation: every error names the field
/// path (`preview.text`), and ``finish()`` refuses fields nobody asked for.
struct FieldReader {
    let object: JSONObject
    let path: String
    private var used: Set<String> = []

    /// Size limits, in UTF-8 bytes (documented in Specs/events.md).
    enum Limit {
        static let id = 128
        static let name = 256
        static let text = 16_384
        static let rationale = 4_096
        static let outcome = 16_384
    }

    init(_ json: JSON, path: String = "") throws {
        guard case .object(let o) = json else {
            throw LedgerError(.invalidInput, path.isEmpty ? "expected a JSON object" : "field '\(path)': expected an object",
                              details: ["field": .string(path)])
        }
        object = o
        self.path = path
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func fail(_ key: String, _ what: String) -> LedgerError {
        LedgerError(.invalidInput, "field '\(name(key))': \(what)", details: ["field": .string(name(key))])
    }

    mutating func raw(_ key: String) -> JSON? {
        used.insert(key)
        if case .null? = object[key] { return nil }
        return object[key]
    }

    mutating func require(_ key: String) throws -> JSON {
        guard let v = raw(key) else { throw fail(key, "is required") }
        return v
    }

    mutating func optionalString(_ key: String, max: Int) throws -> String? {
        guard let v = raw(key) else { return nil }
        guard case .string(let s) = v else { throw fail(key, "expected a string") }
        guard s.utf8.count <= max else { throw fail(key, "is \(s.utf8.count) bytes; the limit is \(max)") }
        return s
    }

    mutating func string(_ key: String, max: Int, allowEmpty: Bool = false) throws -> String {
        guard let s = try optionalString(key, max: max) else { throw fail(key, "is required") }
        if !allowEmpty, s.isEmpty { throw fail(key, "must not be empty") }
        return s
    }

    /// An identifier: 1…128 bytes of ASCII letters, digits and `-_.:@` (Specs/events.md).
    mutating func identifier(_ key: String) throws -> String {
        let s = try string(key, max: Limit.id)
        if let bad = FieldReader.identifierProblem(s) { throw fail(key, bad) }
        return s
    }

    mutating func optionalIdentifier(_ key: String) throws -> String? {
        guard let s = try optionalString(key, max: Limit.id) else { return nil }
        if let bad = FieldReader.identifierProblem(s) { throw fail(key, bad) }
        return s
    }

    /// Why `s` is not an identifier, or nil. The set is small on purpose: ids are printed
    /// to auditors and compared by eye, so a character that can hide (a no-break space),
    /// reorder text (U+202E) or look like another (a Cyrillic `а`) must not make two
    /// different ids look the same. Only new input is checked; stored events stay readable.
    static func identifierProblem(_ s: String) -> String? {
        if s.isEmpty { return "must not be empty" }
        if s.utf8.count > Limit.id { return "is longer than \(Limit.id) bytes" }
        // Every command checks its id: one pass over the contiguous bytes (the UTF-8 view's
        // iterator costs far more per byte), scalars only to name a bad one.
        var bytes = s
        if bytes.withUTF8({ $0.allSatisfy { $0 < 0x80 && isIdentifierScalar(Unicode.Scalar($0)) } }) { return nil }
        if let bad = s.unicodeScalars.first(where: { !isIdentifierScalar($0) }) {
            let hex = String(bad.value, radix: 16, uppercase: true)
            return "must contain only ASCII letters, digits and - _ . : @ (found U+"
                + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + ")"
        }
        return nil
    }

    /// Refuses a free-text reason (a dismissal's, a revocation's) longer than the event's
    /// field takes: checked where the command is judged, whoever sends it, so the log never
    /// holds an event its own export could not import.
    /// - throws: `invalid_input` naming `reason`.
    static func requireReason(_ reason: String) throws {
        guard reason.utf8.count <= Limit.rationale else {
            throw LedgerError(.invalidInput, "reason is \(reason.utf8.count) bytes; the limit is \(Limit.rationale)",
                              details: ["field": "reason"])
        }
    }

    static func isIdentifierScalar(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true  // 0-9 A-Z a-z
        case 0x2D, 0x5F, 0x2E, 0x3A, 0x40: true           // - _ . : @
        default: false
        }
    }

    mutating func optionalNumber(_ key: String) throws -> Double? {
        guard let v = raw(key) else { return nil }
        guard case .number(let n) = v else { throw fail(key, "expected a number") }
        return n
    }

    mutating func number(_ key: String) throws -> Double {
        guard let n = try optionalNumber(key) else { throw fail(key, "is required") }
        return n
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int>) throws -> Int {
        let n = try number(key)
        guard n == n.rounded(), n >= Double(range.lowerBound), n <= Double(range.upperBound) else {
            throw fail(key, "expected a whole number in \(range.lowerBound)…\(range.upperBound)")
        }
        return Int(n)
    }

    mutating func optionalBool(_ key: String) throws -> Bool? {
        guard let v = raw(key) else { return nil }
        guard case .bool(let b) = v else { throw fail(key, "expected true or false") }
        return b
    }

    mutating func bool(_ key: String) throws -> Bool {
        guard let b = try optionalBool(key) else { throw fail(key, "is required") }
        return b
    }

    mutating func optionalTimestamp(_ key: String) throws -> Timestamp? {
        guard let s = try optionalString(key, max: 64) else { return nil }
        guard let t = Timestamp(iso8601: s) else { throw fail(key, "expected an ISO-8601 time, got \"\(s)\"") }
        return t
    }

    mutating func timestamp(_ key: String) throws -> Timestamp {
        guard let t = try optionalTimestamp(key) else { throw fail(key, "is required") }
        return t
    }

    mutating func stakes(_ key: String) throws -> Stakes {
        let s = try string(key, max: 16)
        guard let v = Stakes(rawValue: s) else { throw fail(key, "expected low, medium or high, got \"\(s)\"") }
        return v
    }

    mutating func digest(_ key: String) throws -> Digest {
        let s = try string(key, max: 64)
        guard let d = Digest(hex: s) else { throw fail(key, "expected 64 hex digits") }
        return d
    }

    mutating func object(_ key: String) throws -> FieldReader {
        try FieldReader(try require(key), path: name(key))
    }

    mutating func optionalObject(_ key: String) throws -> FieldReader? {
        guard let v = raw(key) else { return nil }
        return try FieldReader(v, path: name(key))
    }

    mutating func array(_ key: String, max: Int) throws -> [JSON] {
        guard let v = raw(key) else { return [] }
        guard case .array(let items) = v else { throw fail(key, "expected an array") }
        guard items.count <= max else { throw fail(key, "has \(items.count) items; the limit is \(max)") }
        return items
    }

    /// Refuses fields that were never read: a typo must not be silently ignored.
    func finish() throws {
        if let extra = object.keys.first(where: { !used.contains($0) }) {
            throw fail(extra, "is not a known field")
        }
    }
}

/// The identifier rule (Specs/events.md) for callers outside the engine, e.g. the CLI's
/// `--actor`: 1…128 bytes of ASCII letters, digits and `-_.:@`.
public enum Identifier {
    /// Why `s` is not an identifier, or nil when it is one.
    public static func problem(_ s: String) -> String? { FieldReader.identifierProblem(s) }
}
