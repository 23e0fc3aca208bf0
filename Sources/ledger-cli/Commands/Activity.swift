import ActionLedger
import ArgumentParser

struct Activity: LedgerSubcommand {
    static let configuration = CommandConfiguration(abstract: "A person's timeline, oldest first, optionally by event type.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var time: NowOption
    @OptionGroup var window: WindowOptions

    @Option(help: "Whose timeline.")
    var person: String

    @Option(name: .customLong("type"), parsing: .upToNextOption,
            help: "Only these event types, e.g. action.approved device.revoked (repeatable).")
    var types: [String] = []

    @Option(help: "Events per page.")
    var limit = 100

    @Option(name: .customLong("page-token"), help: "Continue after an earlier page (its next_page_token).")
    var pageToken: String?

    func execute() throws {
        try CommandRunner.requireName(person, option: "--person", field: "person")
        let ledger = try global.open(write: false)
        // An empty name (`--type ''`) is no type: it had filtered everything out, answering nothing.
        let names = types.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let filter: Set<EventType>? = types.isEmpty ? nil : Set(try names.map { name in
            guard let t = EventType(name: String(name)) else {
                throw LedgerError(.invalidInput, "--type: unknown event type \(name) (e.g. action.approved)")
            }
            return t
        })
        let w = try window.window(now: try time.resolve(global, ledger), defaultSince: nil)
        let page = try ledger.query { try $0.activity(person: person, types: filter, in: w, limit: limit, pageToken: pageToken) }
        let proofs = try ledger.proofSummaries(page.items.map(\.seq))
        if global.json { return Output.json(page.json(proofs: proofs)) }
        for i in page.items {
            Human.line("#\(i.seq) \(i.at.iso8601) \(i.type.name)\(i.actionId.map { " \($0)" } ?? "") by \(i.actor)"
                + "\(i.device.map { " on \($0)" } ?? ""): \(i.summary)" + ProofColumns.human(proofs[i.seq]))
        }
        if let t = page.nextPageToken { Human.line("… more: --page-token \(t)") }
    }
}
