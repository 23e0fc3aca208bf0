extension TodayProjection {
    /// A feed entry's value: enough to filter (holds, expiry) and group (specialist,
    /// kind) without reading the item.
    struct FeedEntry {
        var actionId: String
        var heldUntil: Timestamp?
        var expiresAt: Timestamp?
        var specialist: String
        var kind: String

        var encoded: [UInt8] {
            var w = BinaryWriter(capacity: 64)
            w.string(actionId)
            w.optional(heldUntil) { $0.timestamp($1) }
            w.optional(expiresAt) { $0.timestamp($1) }
            w.string(specialist)
            w.string(kind)
            return w.bytes
        }

        init(actionId: String, heldUntil: Timestamp?, expiresAt: Timestamp?, specialist: String, kind: String) {
            self.actionId = actionId
            self.heldUntil = heldUntil
            self.expiresAt = expiresAt
            self.specialist = specialist
            self.kind = kind
        }

        init(decoding b: UnsafeRawBufferPointer) throws {
            var r = BinaryReader(b)
            actionId = try r.string()
            heldUntil = try r.optional { try $0.timestamp() }
            expiresAt = try r.optional { try $0.timestamp() }
            specialist = try r.string()
            kind = try r.string()
        }

        /// Whether it needs its person at `now`: no hold running past now, not expired.
        func isDue(at now: Timestamp) -> Bool {
            !(heldUntil.map { $0 > now } ?? false) && !(expiresAt.map { $0 <= now } ?? false)
        }
    }
}
