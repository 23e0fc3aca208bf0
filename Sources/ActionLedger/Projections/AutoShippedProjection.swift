/// The auto-ship audit: every `action.auto_shipped`, indexed by time so that a window
/// costs what it returns, not what the log holds.
///
/// Databases:
/// - `by_time`: time(at) ‖ seq → ``AutoShippedProjection/Record``.
/// - `by_person`: person ‖ 0x00 ‖ time(at) ‖ seq → kind (the Today card).
/// - `open`: action id → kind, specialist, surface of actions proposed and not yet decided:
///   what an auto-ship needs to describe itself (the event carries only the decision).
public struct AutoShippedProjection: Projection {
    public let name = "autoshipped"
    // 2: the logical databases share one LMDB database (ProjectionStore).
    public let version: UInt32 = 2
    public let databases = ["by_time", "by_person", "open"]
    static let byTime = 0, byPerson = 1, open = 2

    public init() {}

    /// One auto-ship as the audit shows it.
    public struct Record: Sendable, Equatable {
        public var seq: UInt64
        public var at: Timestamp
        public var actionId: String
        public var person: String
        public var kind: String
        public var specialist: Specialist
        public var surface: String
        public var policyVersion: UInt32
        public var rule: String
        public var confidence: Double

        var encoded: [UInt8] {
            var w = BinaryWriter(capacity: 128)
            w.string(actionId)
            w.string(person)
            w.string(kind)
            w.string(specialist.name)
            w.string(specialist.agent)
            w.string(surface)
            w.varint(UInt64(policyVersion))
            w.string(rule)
            w.double(confidence)
            return w.bytes
        }

        init(seq: UInt64, at: Timestamp, actionId: String, person: String, kind: String, specialist: Specialist,
             surface: String, policyVersion: UInt32, rule: String, confidence: Double) {
            self.seq = seq
            self.at = at
            self.actionId = actionId
            self.person = person
            self.kind = kind
            self.specialist = specialist
            self.surface = surface
            self.policyVersion = policyVersion
            self.rule = rule
            self.confidence = confidence
        }

        /// Decodes the value stored under a `by_time` key.
        init(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
            var r = BinaryReader(value)
            at = ProjectionKeys.time(key, at: 0)
            seq = Keys.readU64(key, at: 8)
            actionId = try r.string()
            person = try r.string()
            kind = try r.string()
            specialist = Specialist(name: try r.string(), agent: try r.string())
            surface = try r.string()
            policyVersion = try EventCodec.readVersion(&r)
            rule = try r.string()
            confidence = try r.double()
        }

        public var json: JSON {
            ["action_id": .string(actionId), "seq": .number(Double(seq)), "at": .string(at.iso8601),
             "person": .string(person), "kind": .string(kind),
             "specialist": ["name": .string(specialist.name), "agent": .string(specialist.agent)],
             "surface": .string(surface), "policy_version": .number(Double(policyVersion)),
             "rule": .string(rule), "confidence": .number(confidence)]
        }
    }

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        switch event.payload {
        case .proposed(let p):
            var w = BinaryWriter(capacity: 64)
            w.string(p.kind)
            w.string(p.specialist.name)
            w.string(p.specialist.agent)
            w.string(p.surface)
            try store.insert(Self.open, key: try key(event), value: w.bytes)
        case .autoShipped(let a):
            let id = try key(event)
            guard let open = try store.withValue(Self.open, key: id, { b -> (String, Specialist, String) in
                var r = BinaryReader(b)
                return (try r.string(), Specialist(name: try r.string(), agent: try r.string()), try r.string())
            }) else {
                throw LedgerError(.projectionStale, "auto-ship of action \(event.actionId ?? ""), which is not open")
            }
            let record = Record(seq: event.seq, at: event.at, actionId: event.actionId ?? "", person: event.person,
                                kind: open.0, specialist: open.1, surface: open.2, policyVersion: a.policyVersion,
                                rule: a.rule, confidence: a.confidence)
            try store.insert(Self.byTime, key: ProjectionKeys.timed(nil, event.at, event.seq), value: record.encoded)
            try store.insert(Self.byPerson, key: ProjectionKeys.timed(event.person, event.at, event.seq),
                          value: Array(open.0.utf8))
            try store.delete(Self.open, key: id)
        case .approved, .dismissed, .expired:
            try store.delete(Self.open, key: try key(event))
        default:
            break
        }
    }

    private func key(_ event: Event) throws -> [UInt8] {
        guard let id = event.actionId else { throw LedgerError(.corruptEvent, "\(event.type.name) without an action id") }
        return Array(id.utf8)
    }
}
