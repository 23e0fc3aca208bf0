/// Durations as people type them: a positive integer and a unit, `90s`, `30m`, `24h`, `7d`
/// (`ledger audit --since`, `tokens issue --expires`, the API's `since=`).
public enum DurationText {
    /// The duration in milliseconds; nil when `text` is not one (or absurdly long).
    public static func milliseconds(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
        // Exactly openapi's Duration, `[1-9][0-9]{0,9}` and a unit: `Int64` alone took "+1",
        // "01" and longer numbers, which the server's contract does not.
        let digits = text.utf8.dropLast()
        guard let unit = text.last.flatMap({ units[$0] }), (1...10).contains(digits.count), digits.first != UInt8(ascii: "0"),
              digits.allSatisfy({ (0x30...0x39).contains($0) }), let n = Int64(text.dropLast()) else { return nil }
        return n * unit
    }
}
