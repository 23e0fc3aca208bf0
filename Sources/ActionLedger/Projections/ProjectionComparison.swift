/// The first entry where a live projection and its rebuilt shadow disagree.
public struct ProjectionDifference: Sendable, Equatable {
    public var projection: String
    /// The logical database (`items`, `by_time`…), or `meta` when only the recorded
    /// digest or checkpoint disagrees.
    public var database: String
    public var key: [UInt8]
    /// The live value; nil when the live projection lacks the key.
    public var live: [UInt8]?
    /// The rebuilt value; nil when the rebuild lacks the key.
    public var rebuilt: [UInt8]?
    public var note: String

    public var json: JSON {
        func hex(_ b: [UInt8]?) -> JSON { b.map { .string(PageToken($0).description) } ?? .null }
        return ["projection": .string(projection), "database": .string(database), "key": hex(key),
                "key_text": .string(String(decoding: key.map { $0 == 0 ? UInt8(ascii: "|") : $0 }, as: UTF8.self)),
                "live": hex(live), "rebuilt": hex(rebuilt), "note": .string(note)]
    }
}

/// Compares a live projection with a shadow at the same checkpoint, entry by entry.
enum ProjectionComparison {
    /// The live state's digest recomputed from its entries, and the first difference
    /// (nil when the entries, the checkpoints and the recorded digests all agree).
    static func compare(_ p: any Projection, registry: ProjectionRegistry, shadow: ProjectionMeta,
                        in txn: Transaction) throws -> (liveDigest: Digest, shadowDigest: Digest, difference: ProjectionDifference?) {
        let shadowStore = try registry.store(for: p, meta: shadow, in: txn)
        guard let liveMeta = try registry.meta(p.name, in: txn),
              let liveStore = try registry.store(for: p, meta: liveMeta, in: txn), let shadowStore else {
            return (.zero, .zero, ProjectionDifference(projection: p.name, database: "meta", key: Array(p.name.utf8), live: nil,
                                                               rebuilt: shadow.encoded, note: "the live projection was never built"))
        }
        let liveDigest = try liveStore.stateDigest(), shadowDigest = try shadowStore.stateDigest()
        if liveDigest == shadowDigest, liveMeta.checkpoint == shadow.checkpoint, liveMeta.version == shadow.version {
            return (liveDigest, shadowDigest, nil)
        }
        if var d = try firstDifference(txn, liveStore.database, shadowStore.database) {
            // Name the logical database by the key's range byte, and drop that byte.
            let range = d.key.first.map(Int.init) ?? 0
            d.projection = p.name
            d.database = range < p.databases.count ? p.databases[range] : "range \(range)"
            d.key = Array(d.key.dropFirst())
            return (liveDigest, shadowDigest, d)
        }
        if let live = liveStore.postingDatabase, let rebuilt = shadowStore.postingDatabase,
           var d = try firstDifference(txn, live, rebuilt) {
            // Postings: the family by the key's first byte; the key is the list's id.
            let family = d.key.first.map(Int.init) ?? 0
            d.projection = p.name
            d.database = family < p.postings.count ? p.postings[family] : "family \(family)"
            d.key = Array(d.key.dropFirst())
            return (liveDigest, shadowDigest, d)
        }
        let note = liveMeta.checkpoint != shadow.checkpoint || liveMeta.version != shadow.version
            ? "live is at seq \(liveMeta.checkpoint) (version \(liveMeta.version)), "
                + "the rebuild at \(shadow.checkpoint) (version \(shadow.version))"
            : "the entries agree but their digests differ: live \(liveDigest.hex), rebuilt \(shadowDigest.hex)"
        return (liveDigest, shadowDigest, ProjectionDifference(projection: p.name, database: "meta", key: Array(p.name.utf8),
                                                               live: liveMeta.encoded, rebuilt: shadow.encoded, note: note))
    }

    /// Walks both databases in key order; the first key present in one only, or whose values differ.
    static func firstDifference(_ txn: Transaction, _ live: Database, _ rebuilt: Database) throws -> ProjectionDifference? {
        let a = try Cursor(txn, live), b = try Cursor(txn, rebuilt)
        defer { a.close(); b.close() }
        var x = try a.first(), y = try b.first()
        func diff(_ key: UnsafeRawBufferPointer, _ l: UnsafeRawBufferPointer?, _ r: UnsafeRawBufferPointer?,
                  _ note: String) -> ProjectionDifference {
            ProjectionDifference(projection: "", database: "", key: Array(key), live: l.map { Array($0) },
                                 rebuilt: r.map { Array($0) }, note: note)
        }
        while true {
            switch (x, y) {
            case (nil, nil):
                return nil
            case (nil, let r?):
                return diff(r.key, nil, r.value, "only in the rebuild")
            case (let l?, nil):
                return diff(l.key, l.value, nil, "only in the live projection")
            case (let l?, let r?):
                if l.key.lexicographicallyPrecedes(r.key) { return diff(l.key, l.value, nil, "only in the live projection") }
                if r.key.lexicographicallyPrecedes(l.key) { return diff(r.key, nil, r.value, "only in the rebuild") }
                if !l.value.elementsEqual(r.value) { return diff(l.key, l.value, r.value, "values differ") }
                x = try a.next()
                y = try b.next()
            }
        }
    }
}
