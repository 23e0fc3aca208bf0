/// Durations as people type them: a positive integer and a unit, `90s`, `30m`, `24h`, `7d`
/// (`ledger audit --since`, `tokens issue --expires`, the API's `since=`).
public enum DurationText {
    /// The duration in milliseconds; nil when `text` is not one (or absurdly long).
    public static func milliseconds(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
        guard let unit = text.last.flatMap({ units[$0] }), let n = Int64(text.dropLast()), n > 0,
              n <= Int64.max / unit / 2 else { return nil }
        return n * unit
    }
}
