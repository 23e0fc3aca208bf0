import Foundation

/// Specs/policy.md read as data, so tests take the rule ids, tap paths and refusal codes
/// from the document itself rather than from a copy that could drift from it.
enum PolicySpec {
    /// Specs/policy.md, found from this file (Tests/ActionLedgerTests/Support/PolicySpec.swift).
    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Specs/policy.md")

    /// One markdown table: its header cells and body rows (cells trimmed).
    struct Table {
        var header: [String]
        var rows: [[String]] = []

        /// The column whose header satisfies `match`, if any.
        func column(_ match: (String) -> Bool) -> Int? { header.firstIndex { match($0.lowercased()) } }
    }

    static func text() throws -> String { try String(contentsOf: url, encoding: .utf8) }

    /// Every table of the document, in order.
    static func tables() throws -> [Table] {
        var out: [Table] = []
        var current: Table?
        for line in try text().split(separator: "\n", omittingEmptySubsequences: false) {
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("|") else {
                if let c = current { out.append(c) }
                current = nil
                continue
            }
            let cells = t.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if current == nil {
                current = Table(header: cells)
            } else if !cells.allSatisfy({ $0.allSatisfy { "-: ".contains($0) } }) {  // not |---|---|
                current!.rows.append(cells)
            }
        }
        if let c = current { out.append(c) }
        return out
    }

    /// The `backticked` parts of a cell or line.
    static func ticked(_ text: some StringProtocol) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// Every rule id the document defines: the backticked ids of each table column headed
    /// "Rule id" or "Decision rule id …", and each id a paragraph opens with "`id` names …"
    /// (`device.linked_own`, the accepted case of the device checks). In document order.
    static func ruleIds() throws -> [String] {
        var ids: [String] = []
        func add(_ id: String) { if !ids.contains(id) { ids.append(id) } }
        for table in try tables() {
            guard let c = table.column({ $0 == "rule id" || $0.hasPrefix("decision rule id") }) else { continue }
            for row in table.rows where c < row.count { ticked(row[c]).forEach(add) }
        }
        for line in try text().split(separator: "\n") where line.hasPrefix("`") {
            if let id = ticked(line).first, line.dropFirst(id.count + 2).hasPrefix(" names ") { add(id) }
        }
        return ids
    }

    /// The refusal codes of the refusal-code table (its "Code" column).
    static func refusalCodes() throws -> [String] {
        try tables().flatMap { table -> [String] in
            guard let c = table.column({ $0 == "code" }) else { return [] }
            return table.rows.compactMap { c < $0.count ? ticked($0[c]).first : nil }
        }
    }

    /// The tap path (steps in order) and decision rule id of each effective stakes, from the
    /// table of §2 ("Effective stakes | Tap path (in order) | … | Decision rule id …").
    static func tapPaths() throws -> [String: (path: [String], rule: String)] {
        var out: [String: (path: [String], rule: String)] = [:]
        for table in try tables() {
            guard let s = table.column({ $0 == "effective stakes" }), let p = table.column({ $0.hasPrefix("tap path") }),
                  let r = table.column({ $0.hasPrefix("decision rule id") }) else { continue }
            for row in table.rows where row.count > max(s, p, r) {
                let path = row[p].components(separatedBy: "→").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let rule = ticked(row[r]).first else { continue }
                out[row[s]] = (path, rule)
            }
        }
        return out
    }
}
