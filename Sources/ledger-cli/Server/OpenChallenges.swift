import ActionLedger

/// The session challenges a keyed device may answer, at most ``perDevice`` per device (its
/// oldest goes first), so what callers can make the server keep is bounded by the store's
/// keyed devices, and no caller can fill a table every other device shares. Challenges for
/// device ids without a key are never kept: nothing can answer them.
struct OpenChallenges {
    struct Entry {
        let device: String
        let purpose: LedgerServer.Purpose
        let statement: [UInt8]
        let expiresAt: Timestamp
    }

    let perDevice: Int
    private var byId: [String: Entry] = [:]
    /// Each device's open ids, oldest first (expiry times only grow).
    private var byDevice: [String: [String]] = [:]

    init(perDevice: Int) { self.perDevice = perDevice }

    mutating func add(_ id: String, _ entry: Entry, now: Timestamp) {
        var ids = byDevice[entry.device, default: []]
        while let first = ids.first, ids.count >= perDevice || (byId[first]?.expiresAt ?? now) <= now {
            ids.removeFirst()
            byId[first] = nil
        }
        ids.append(id)
        byDevice[entry.device] = ids
        byId[id] = entry
    }

    /// Challenges kept, all devices together.
    var count: Int { byId.count }

    /// Takes `id` out (a challenge answers once, whatever the answer).
    mutating func take(_ id: String) -> Entry? {
        guard let entry = byId.removeValue(forKey: id) else { return nil }
        byDevice[entry.device]?.removeAll { $0 == id }
        if byDevice[entry.device]?.isEmpty == true { byDevice[entry.device] = nil }
        return entry
    }
}
