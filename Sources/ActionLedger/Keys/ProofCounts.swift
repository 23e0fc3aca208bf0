import Synchronization

/// The proof report's window counts (``ProofReport``: decisions by level, auto-ships, the
/// two lists' totals), kept with the log head they were counted to.
///
/// Every page of a report answers the counts of its whole window; counted afresh, each
/// page read the window again, so paging through it cost its length times its pages. The
/// log only grows, and the head's chain hash commits to every event before it: counts taken
/// to a head whose hash still matches are exact for that prefix, and a later page adds only
/// the events appended since. Nothing a caller sends (its page token included) feeds them.
struct ProofCounts: Sendable, Equatable {
    var byLevel: [ProofLevel: Int] = [:]
    var autoShipped = 0
    var unprovenTotal = 0
    var userVerificationUnprovenTotal = 0

    /// Counts `view`'s event if it is a decision in `window` (of `org`, when given).
    mutating func count(_ view: EventView, _ decode: () throws -> Event, window: TimeWindow, org: [UInt8]?) throws {
        switch view.type {
        case .actionApproved, .actionDismissed, .actionAutoShipped: break
        default: return
        }
        guard Self.isIn(view, window, org: org) else { return }
        // An auto-ship is counted from its type alone: no device, no proof to read.
        if view.type == .actionAutoShipped { return autoShipped += 1 }
        guard let (level, kind) = ProofReport.classify(try decode()), let level else { return }
        byLevel[level, default: 0] += 1
        switch kind {
        case .unproven?: unprovenTotal += 1
        case .userVerificationUnproven?: userVerificationUnprovenTotal += 1
        case nil: break
        }
    }

    /// Whether `view`'s event is in `window` and of `org` (any org when nil): the report's scope.
    static func isIn(_ view: EventView, _ window: TimeWindow, org: [UInt8]?) -> Bool {
        window.contains(view.at) && (org.map { view[view.org].elementsEqual($0) } ?? true)
    }
}

/// A ledger's recent ``ProofCounts`` by query (window and org), each with its head.
final class ProofCountCache: Sendable {
    struct Query: Hashable {
        let from: Timestamp
        let to: Timestamp
        let org: String?
    }

    struct Entry {
        let head: LogHead
        let counts: ProofCounts
    }

    /// Few auditors page at once: past this many queries the table starts again.
    private static let capacity = 64
    private let entries = Mutex<[Query: Entry]>([:])

    func entry(_ query: Query) -> Entry? { entries.withLock { $0[query] } }

    func store(_ entry: Entry, for query: Query) {
        entries.withLock {
            if $0.count >= Self.capacity, $0[query] == nil { $0.removeAll() }
            $0[query] = entry
        }
    }
}
