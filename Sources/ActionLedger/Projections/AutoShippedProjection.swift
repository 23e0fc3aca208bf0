/// The auto-ship audit: a pointer to every `action.auto_shipped`, by time and by person,
/// so that a window costs what it returns, not what the log holds. Records are rendered
/// from the log when queried (the event and its action's proposal).
///
/// Postings (seqs): `by_time` (one list), `by_person` (id = the person).
public struct AutoShippedProjection: Projection {
    // Computed, not stored: the struct stays empty, so the fold copies it (an existential) without retaining anything.
    public var name: String { "autoshipped" }
    // 5: postings stored as segments. 4: postings are seqs. 3: postings only; records rendered from the log.
    public var version: UInt32 { 5 }
    public var foldCost: Int { 2 }
    public var databases: [String] { [] }
    public var postings: [String] { ["by_time", "by_person"] }
    static let byTime = 0, byPerson = 1

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

        public var json: JSON {
            ["action_id": .string(actionId), "seq": .number(Double(seq)), "at": .string(at.iso8601),
             "person": .string(person), "kind": .string(kind),
             "specialist": ["name": .string(specialist.name), "agent": .string(specialist.agent)],
             "surface": .string(surface), "policy_version": .number(Double(policyVersion)),
             "rule": .string(rule), "confidence": .number(confidence)]
        }
    }

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        guard case .autoShipped = event.payload else { return }
        try store.post(Self.byTime, EmptyCollection(), seq: event.seq)
        try store.post(Self.byPerson, event.person.utf8, seq: event.seq)
    }

    public func apply(_ v: EventView, to store: ProjectionStore, decode: () throws -> Event) throws {
        guard v.type == .actionAutoShipped else { return }
        try store.post(Self.byTime, EmptyCollection(), seq: v.seq)
        try store.post(Self.byPerson, v[v.person], seq: v.seq)
    }
}
