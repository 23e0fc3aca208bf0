import ActionLedger
import ArgumentParser

/// `--now`, shared by the queries: the instant holds, expiries and windows are judged at.
struct NowOption: ParsableArguments {
    @Option(help: "Judge holds, expiry and windows at this ISO-8601 time (default: LEDGER_NOW, else the system clock).")
    var now: String?

    func resolve(_ global: GlobalOptions, _ ledger: Ledger) throws -> Timestamp {
        try now.map { try Clock.parse($0, option: "--now") } ?? global.now(ledger)
    }
}

/// `--from/--to/--since`: the window of a listing.
struct WindowOptions: ParsableArguments {
    @Option(help: "Window start, ISO-8601, inclusive.")
    var from: String?

    @Option(help: "Window end, ISO-8601, exclusive (default: just after --now).")
    var to: String?

    @Option(help: "The last DURATION up to --now, e.g. 24h, 90m, 7d (now − DURATION < at ≤ now).")
    var since: String?

    /// The window; `defaultSince` applies when none of the options is given (nil: all time).
    func window(now: Timestamp, defaultSince: Int64?) throws -> TimeWindow {
        if let since {
            guard from == nil, to == nil else { throw LedgerError(.invalidInput, "give --since or --from/--to, not both", details: ["field": "since"]) }
            return .last(try Duration.parse(since), before: now)
        }
        if from == nil, to == nil {
            return defaultSince.map { .last($0, before: now) } ?? .all
        }
        // The engine's earliest time, not `Int64.min`: the JSON prints the window's start.
        let start = try from.map { try Clock.parse($0, option: "--from") } ?? TimeRules.earliest
        let end = try to.map { try Clock.parse($0, option: "--to") } ?? now.adding(milliseconds: 1)
        guard start < end else { throw LedgerError(.invalidInput, "--from \(start.iso8601) is not before --to \(end.iso8601)") }
        return TimeWindow(from: start, to: end)
    }
}

/// `--csv` for audit listings.
struct CSVOption: ParsableArguments {
    @Flag(help: "Print CSV (RFC 4180, with a header row) instead of text.")
    var csv = false
}

enum Duration {
    /// `90s`, `30m`, `24h`, `7d` (a positive integer and a unit) in milliseconds.
    static func parse(_ text: String) throws -> Int64 {
        guard let ms = DurationText.milliseconds(text) else {
            throw LedgerError(.invalidInput, "--since: expected a duration such as 24h, 90m or 7d, got \(text)", details: ["field": "since"])
        }
        return ms
    }
}

enum CSV {
    static func field(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func print(header: [String], rows: [[String]]) {
        Swift.print(header.map(field).joined(separator: ","))
        for r in rows { Swift.print(r.map(field).joined(separator: ",")) }
    }
}

/// Text and CSV forms of audit entries.
enum AuditPrinter {
    static func line(_ e: AuditEntry, _ proof: ProofSummary?) -> String {
        var s = "#\(e.seq) \(e.at.iso8601) \(e.type.name)"
        if let a = e.actionId { s += " \(a)" }
        s += " by \(e.actor)"
        if let d = e.device { s += " on \(d)" }
        s += " (policy v\(e.policyVersion)"
        if let r = e.rule { s += ", \(r)" }
        s += ")"
        if let sp = e.specialist, let surface = e.surface { s += " [\(sp.name) · \(surface)]" }
        if let u = e.until { s += " until \(u.iso8601)" }
        if let d = e.detail, !d.isEmpty { s += ": \(d)" }
        return s + ProofColumns.human(proof)
    }

    /// Entries as JSON items or CSV rows, each with its step's proof (``ProofColumns``).
    static func json(_ entries: [AuditEntry], _ proofs: [UInt64: ProofSummary]) -> JSON {
        .array(entries.map { ProofSummary.appending(proofs[$0.seq], to: $0.json) })
    }

    static func csv(_ entries: [AuditEntry], _ proofs: [UInt64: ProofSummary]) {
        CSV.print(header: AuditEntry.csvHeader + ProofColumns.csvHeader,
                  rows: entries.map { $0.csvRow + ProofColumns.csv(proofs[$0.seq]) })
    }

    static func print(_ listing: AuditListing, ledger: Ledger, global: GlobalOptions, csv: Bool) throws {
        let proofs = try ledger.proofSummaries(listing.entries.map(\.seq))
        if global.json {
            guard case .object(var o) = listing.json else { return }
            o["items"] = json(listing.entries, proofs)
            Output.json(.object(o))
        } else if csv {
            self.csv(listing.entries, proofs)
        } else {
            for e in listing.entries { Human.line(line(e, proofs[e.seq])) }
            if let t = listing.nextPageToken { Human.line("… more: --page-token \(t)") }
        }
    }
}

/// The options every audit listing shares, and the one way they run.
struct AuditListingOptions: ParsableArguments {
    @OptionGroup var time: NowOption
    @OptionGroup var window: WindowOptions
    @OptionGroup var format: CSVOption

    @Option(help: "Entries per page.")
    var limit = 100

    @Option(name: .customLong("page-token"), help: "Continue after an earlier page (its next_page_token).")
    var pageToken: String?

    /// Lists `index` in the window (`defaultSince` when no window option is given; nil: all time).
    func run(_ index: AuditIndex, defaultSince: Int64? = nil, global: GlobalOptions) throws {
        let ledger = try global.open(write: false)
        // An empty listing must mean "did nothing", never "no such device": a typo in an
        // auditor's query would otherwise read as a clean record.
        if case .device(let id) = index, try ledger.read({ try $0.deviceState(id) }) == nil {
            throw LedgerError(.unknownDevice, "device \(id) was never linked", details: ["device": .string(id)])
        }
        let w = try window.window(now: try time.resolve(global, ledger), defaultSince: defaultSince)
        let listing = try ledger.query { try $0.audit(index, in: w, limit: limit, pageToken: pageToken) }
        try AuditPrinter.print(listing, ledger: ledger, global: global, csv: format.csv)
    }
}
