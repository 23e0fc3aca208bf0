/// Requests under one `Idempotency-Key` run one at a time, in arrival order. The engine
/// judges a second request under a used key a replay as soon as the first commits, but the
/// first's response is kept in the session file only after that: a replay in between would
/// get a freshly built body (`"replayed": true`) instead of the original byte for byte. So
/// the second waits until the first has kept its response, then finds it there.
final class KeyedGate: Sendable {
    /// For each held key, the requests waiting for it.
    private let held = Locked([String: [CheckedContinuation<Void, Never>]]())

    /// Waits until `key` is free, then holds it.
    func enter(_ key: String) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = held.withLock { h -> Bool in
                guard h[key] != nil else {
                    h[key] = []
                    return true
                }
                h[key]!.append(c)
                return false
            }
            if now { c.resume() }
        }
    }

    /// Releases `key`: to the first request waiting for it (which then holds it), if any.
    func leave(_ key: String) {
        let next = held.withLock { h -> CheckedContinuation<Void, Never>? in
            guard var waiting = h[key], !waiting.isEmpty else {
                h[key] = nil
                return nil
            }
            let first = waiting.removeFirst()
            h[key] = waiting
            return first
        }
        next?.resume()
    }

    /// Keys held now (tests).
    var heldKeys: Int { held.withLock { $0.count } }
}
