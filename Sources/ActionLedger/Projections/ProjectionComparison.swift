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

/// Finds where a live projection and a fold of the log (in memory) disagree.
enum ProjectionComparison {
    /// The first difference: entries database by database in key order, then posting lists
    /// in key order (a list is named by family and id, with each side's length as its
    /// value, 8 bytes BE; nil on the side that lacks the list). Nil when they agree.
    static func firstDifference(_ p: any Projection, live: ProjectionStore, rebuilt: ProjectionStore) throws -> ProjectionDifference? {
        func entries(_ s: ProjectionStore, _ db: Int) throws -> [(key: [UInt8], value: [UInt8])] {
            var out: [(key: [UInt8], value: [UInt8])] = []
            try s.scan(db) { k, v in
                out.append((Array(k), Array(v)))
                return true
            }
            return out
        }
        func difference(_ database: String, _ key: [UInt8], _ l: [UInt8]?, _ r: [UInt8]?, _ note: String) -> ProjectionDifference {
            ProjectionDifference(projection: p.name, database: database, key: key, live: l, rebuilt: r, note: note)
        }
        for db in 0..<p.databases.count {
            let l = try entries(live, db), r = try entries(rebuilt, db)
            var i = 0, j = 0
            while i < l.count || j < r.count {
                if j == r.count || (i < l.count && l[i].key.lexicographicallyPrecedes(r[j].key)) {
                    return difference(p.databases[db], l[i].key, l[i].value, nil, "only in the live projection")
                }
                if i == l.count || r[j].key.lexicographicallyPrecedes(l[i].key) {
                    return difference(p.databases[db], r[j].key, nil, r[j].value, "only in the rebuild")
                }
                if l[i].value != r[j].value { return difference(p.databases[db], l[i].key, l[i].value, r[j].value, "values differ") }
                i += 1
                j += 1
            }
        }
        let l = try live.listDigests(), r = try rebuilt.listDigests()
        for key in Set(l.keys).union(r.keys).sorted(by: { $0.lexicographicallyPrecedes($1) }) where l[key] != r[key] {
            let family = Int(key.first ?? 0)
            let name = family < p.postings.count ? p.postings[family] : "family \(family)"
            let note = switch (l[key], r[key]) {
            case (nil, _): "list only in the rebuild"
            case (_, nil): "list only in the live projection"
            case let (a?, b?): "lists differ: live \(a.count) postings, rebuilt \(b.count)"
            }
            return difference(name, Array(key.dropFirst()), l[key].map { Keys.u64(UInt64($0.count)) },
                              r[key].map { Keys.u64(UInt64($0.count)) }, note)
        }
        return nil
    }
}
