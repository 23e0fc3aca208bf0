/// The engine's rules for event times (Specs/events.md, "Time"): times stay within
/// 2000…2100 and never go backwards along the log.
public enum TimeRules {
    /// 2000-01-01T00:00:00Z: the earliest time an event may carry.
    public static let earliest = Timestamp(milliseconds: 946_684_800_000)
    /// 2100-01-01T00:00:00Z: every event is earlier.
    public static let latest = Timestamp(milliseconds: 4_102_444_800_000)
    /// How far a clock may trail the log's last event and still be used: its time is then
    /// raised to the head's (an NTP step of a few seconds); further behind is refused.
    public static let tolerance: Int64 = 10_000

    /// The first time a clock may read to write after an event dated `head`.
    public static func writableAt(head: Timestamp) -> Timestamp { head.adding(milliseconds: -tolerance) }

    /// The time to record for a command whose clock reads `now`, given the time of the
    /// log's last event.
    /// - throws: `invalid_input` outside 2000…2100; `clock_behind` when `now` trails
    ///   `head` by more than ``tolerance``.
    public static func check(_ now: Timestamp, head: Timestamp?) throws -> Timestamp {
        guard now >= earliest, now < latest else {
            throw LedgerError(.invalidInput, "the clock reads \(now.iso8601), outside 2000…2100; fix the clock",
                              details: ["now": .string(now.iso8601)])
        }
        guard let head, now < head else { return now }
        guard head.milliseconds(since: now) <= tolerance else {
            // When writes resume, said in the refusal: a log whose last event a clock running
            // ahead dated refuses writes until this clock reaches it (Specs/cli.md, clock).
            let writable = writableAt(head: head)
            throw LedgerError(.clockBehind, "the clock reads \(now.iso8601), \(head.milliseconds(since: now)) ms "
                + "before the log's last event (\(head.iso8601)); event times never go backwards: fix the clock — or, if "
                + "that event was dated by a clock running ahead, writes are taken again from \(writable.iso8601)",
                details: ["now": .string(now.iso8601), "head_at": .string(head.iso8601), "writable_at": .string(writable.iso8601),
                          "wait_ms": .number(Double(writable.milliseconds(since: now)))])
        }
        return head
    }
}
