import ActionLedger
import ArgumentParser

struct Propose: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Record proposed actions: one JSON object from FILE (or - for stdin), or many with --batch FILE.jsonl.",
        discussion: "A batch is all or nothing: one bad line refuses the whole file, naming the line and field.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A JSON file with one proposal, or - for stdin.")
    var file: String?

    @Option(help: "A JSON Lines file of proposals, recorded in one transaction.")
    var batch: String?

    @Option(name: .customLong("command-id"),
            help: "Idempotency key of the one proposal (or its JSON's command_id); replaying it returns the original result.")
    var commandId: String?

    func validate() throws {
        if (file == nil) == (batch == nil) { throw ValidationError("give either FILE (or -) or --batch FILE.jsonl") }
        if batch != nil && commandId != nil {
            throw ValidationError("--command-id goes with one proposal; in a batch each line carries its own command_id")
        }
    }

    func execute() throws {
        if let batch {
            // Parsed before the store is opened: a bad file touches nothing.
            var (requests, lines) = try Self.parseBatch(try Output.read(batch, limit: Output.batchLimit), now: TimeRules.earliest)
            let ledger = try global.open(write: true)
            let now = try global.now(ledger)
            for i in requests.indices { requests[i].now = now }
            let results: [CommandResult]
            do {
                results = try ledger.execute(batch: requests)
            } catch let e as LedgerError {
                guard case .number(let i)? = e.details["index"] else { throw e }
                var details = e.details
                details["line"] = .number(Double(lines[Int(i)]))
                throw LedgerError(e.code, "line \(lines[Int(i)]): \(e.message)", details: details)
            }
            let autoShipped = results.filter { $0.action?.status == .autoShipped }.count
            if global.json {
                Output.json(["count": .number(Double(results.count)), "auto_shipped": .number(Double(autoShipped)),
                             "replayed": .number(Double(results.filter(\.replayed).count)),
                             "first_seq": results.first?.events.first.map { .number(Double($0.seq)) } ?? .null,
                             "last_seq": results.last?.events.last.map { .number(Double($0.seq)) } ?? .null])
            } else {
                Human.line("recorded \(results.count) proposals (\(autoShipped) auto-shipped) in one transaction")
            }
            return
        }
        let input = try ProposalInput(json: try JSONParser.parse(try Output.read(file!)))
        if let given = commandId, let inJSON = input.commandId, given != inJSON {
            throw LedgerError(.invalidInput, "--command-id \(given) differs from the proposal's command_id \(inJSON)",
                              details: ["field": "command_id"])
        }
        let id = commandId ?? input.commandId
        try CommandRunner.requireIdentifier(id, option: "--command-id", field: "command_id")
        let ledger = try global.open(write: true)
        let now = try global.now(ledger)
        let result = try ledger.execute(CommandRequest(.propose(input), commandId: id, now: now))
        try ResultPrinter.print(result, ledger: ledger, now: now, json: global.json)
    }

    /// Parses JSON Lines; blank lines are skipped; errors name the line.
    static func parseBatch(_ bytes: [UInt8], now: Timestamp) throws -> ([CommandRequest], [Int]) {
        var requests: [CommandRequest] = [], lines: [Int] = []
        var lineNumber = 0
        for raw in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            if raw.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            do {
                let input = try ProposalInput(json: try JSONParser.parse(raw))
                requests.append(CommandRequest(.propose(input), commandId: input.commandId, now: now))
                lines.append(lineNumber)
            } catch let e as LedgerError {
                // The line and the proposal's place in the batch, as a refusal in the store names both.
                var details = e.details
                details["line"] = .number(Double(lineNumber))
                details["index"] = .number(Double(requests.count))
                throw LedgerError(e.code, "line \(lineNumber): \(e.message)", details: details)
            }
        }
        guard !requests.isEmpty else { throw LedgerError(.invalidInput, "the batch has no proposals") }
        return (requests, lines)
    }
}
