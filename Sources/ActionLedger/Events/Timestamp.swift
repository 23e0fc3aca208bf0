/// A point in time: milliseconds since the Unix epoch, UTC. The engine's only clock unit.
///
/// Formatting and parsing are done here, not with Foundation's formatters, so that they
/// are exact (the ISO text round-trips to the same millisecond), fast and thread-safe.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.milliseconds < b.milliseconds }

    public static let hour: Int64 = 3_600_000
    public static let day: Int64 = 86_400_000

    /// The UTC day number (days since the epoch): the unit of the auto-ship daily cap.
    public var utcDay: Int64 { milliseconds >= 0 ? milliseconds / Timestamp.day : (milliseconds + 1) / Timestamp.day - 1 }

    /// Saturating at Int64's ends: a time read from a damaged store can lie anywhere in Int64,
    /// and arithmetic on it must never trap (one such record would take `ledger serve` down).
    public func adding(milliseconds delta: Int64) -> Timestamp {
        let (sum, overflow) = milliseconds.addingReportingOverflow(delta)
        return Timestamp(milliseconds: overflow ? (delta < 0 ? .min : .max) : sum)
    }

    /// `self − other` in milliseconds, saturating for the same reason, within ±Int64.max so
    /// that the result can be negated too.
    public func milliseconds(since other: Timestamp) -> Int64 {
        let (difference, overflow) = milliseconds.subtractingReportingOverflow(other.milliseconds)
        return overflow ? (other.milliseconds < 0 ? .max : -.max) : max(difference, -.max)
    }

    /// `2026-11-22T09:15:00.000Z`: always UTC, always milliseconds.
    public var iso8601: String {
        let days = utcDay
        // Wrapping: the true result lies in 0..<day, but for times near Int64.min (a damaged
        // payload time) the product alone overflows; formatting must never trap.
        let msOfDay = milliseconds &- days &* Timestamp.day
        let (y, m, d) = Timestamp.civil(fromDays: days)
        func pad(_ v: Int64, _ w: Int) -> String {
            let s = String(v)
            return s.count >= w ? s : String(repeating: "0", count: w - s.count) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(msOfDay / 3_600_000, 2)):"
            + "\(pad(msOfDay / 60_000 % 60, 2)):\(pad(msOfDay / 1000 % 60, 2)).\(pad(msOfDay % 1000, 3))Z"
    }

    public var description: String { iso8601 }

    /// Parses ISO-8601 / RFC 3339: `YYYY-MM-DDTHH:MM[:SS[.fff…]](Z|±HH:MM)`, or a date
    /// `YYYY-MM-DD` (midnight UTC). Fractions beyond milliseconds are truncated.
    public init?(iso8601 text: String) {
        let b = Array(text.utf8)
        var i = 0
        func num(_ n: Int) -> Int64? {
            guard i + n <= b.count else { return nil }
            var v: Int64 = 0
            for k in i..<i + n {
                guard b[k] >= 0x30, b[k] <= 0x39 else { return nil }
                v = v * 10 + Int64(b[k] - 0x30)
            }
            i += n
            return v
        }
        func expect(_ c: Character) -> Bool {
            guard i < b.count, b[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        guard let y = num(4), expect("-"), let mo = num(2), expect("-"), let d = num(2),
              (1...12).contains(mo), (1...Timestamp.daysIn(month: mo, year: y)).contains(d) else { return nil }
        var ms = Timestamp.days(fromCivil: y, mo, d) * Timestamp.day
        if i == b.count, Self.printable.contains(ms) { self.init(milliseconds: ms); return }
        guard i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: " ") else { return nil }
        i += 1
        guard let h = num(2), expect(":"), let mi = num(2), h < 24, mi < 60 else { return nil }
        ms += h * Timestamp.hour + mi * 60_000
        if expect(":") {
            guard let s = num(2), s < 60 else { return nil }
            ms += s * 1000
            if expect(".") {
                var digits = 0
                var frac: Int64 = 0
                while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                    if digits < 3 { frac = frac * 10 + Int64(b[i] - 0x30) }
                    digits += 1
                    i += 1
                }
                guard digits > 0 else { return nil }
                for _ in digits..<max(digits, 3) { frac *= 10 }
                ms += frac
            }
        }
        if expect("Z") || expect("z") {
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
            i += 1
            guard let oh = num(2), expect(":"), let om = num(2), oh < 24, om < 60 else { return nil }
            ms -= sign * (oh * Timestamp.hour + om * 60_000)
        } else {
            return nil
        }
        // An offset can carry a time past year 9999 (or before year 1) in UTC, which has no
        // ISO-8601 form: stored, it would make the store's own export unreadable.
        guard i == b.count, Self.printable.contains(ms) else { return nil }
        self.init(milliseconds: ms)
    }

    /// The times that print as ISO-8601 with a four-digit year: 0001-01-01 … 9999-12-31 (UTC).
    static let printable = Timestamp.days(fromCivil: 1, 1, 1) * Timestamp.day ... Timestamp.days(fromCivil: 10000, 1, 1) * Timestamp.day - 1

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
