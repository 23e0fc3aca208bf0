import Foundation

/// The one way human (non-`--json`) output is printed. Text in the log comes from
/// specialists and devices, not from us: a newline in a preview could draw a fake
/// `action.approved … by quinn` line, a U+202E could reverse what follows, and a
/// no-break space makes two ids look alike. So every character that can move the cursor,
/// reorder text or hide itself is shown as an escape (`\n`, `\u{202E}`), and a backslash
/// as `\\` so an escape can never be typed in to look like one. JSON output is untouched:
/// its own escaping already keeps it one value per line. (Specs/cli.md, "Human output".)
enum Human {
    /// `true` for a scalar shown escaped: C0, DEL, C1, bidi controls, line/paragraph
    /// separators, and look-alike or invisible spaces.
    static func mustEscape(_ v: UInt32) -> Bool {
        switch v {
        case 0x00...0x1F, 0x7F...0x9F: true            // C0, DEL, C1
        case 0x061C, 0x200E, 0x200F: true               // bidi marks
        case 0x202A...0x202E, 0x2066...0x2069: true     // bidi embeddings, overrides, isolates
        case 0x2028, 0x2029: true                       // line and paragraph separators
        case 0x00A0, 0x2000...0x200B, 0x202F, 0x205F, 0x3000, 0xFEFF: true  // look-alike/invisible spaces
        default: false
        }
    }

    /// `text` with every unsafe scalar escaped; safe text is returned unchanged.
    static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\\" || mustEscape($0.value) }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for s in text.unicodeScalars {
            switch s {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where mustEscape(s.value): out += "\\u{" + String(s.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(s)
            }
        }
        return out
    }

    /// Prints one line of human output, escaped as a whole (so it stays one line).
    static func line(_ text: String) {
        Swift.print(escape(text))
    }

    /// Prints tab-separated fields, each escaped: the separators are ours, the fields are not.
    static func row(_ fields: [String]) {
        Swift.print(fields.map(escape).joined(separator: "\t"))
    }
}
