import ActionLedger
import ArgumentParser

struct PolicySet: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Put a new policy version in force from a JSON file (or -).",
        discussion: "Omitted settings take the built-in defaults. \"version\" may be omitted; if given it must be the current version + 1.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The policy document (see Specs/schemas/policy.schema.json), or - for stdin.")
    var file: String

    @Option(help: "The organisation.")
    var org = "default"

    @Option(help: "Who sets it (recorded as the actor).")
    var actor = "operator"

    @Option(name: .customLong("command-id"), help: "Idempotency key.")
    var commandId: String?

    func execute() throws {
        let document = try PolicyDocument(json: try JSONParser.parse(try Output.read(file)))
        let ledger = try global.open(write: true)
        let now = try global.now()
        let result = try ledger.execute(CommandRequest(.setPolicy(document, org: org), commandId: commandId, now: now, actor: actor))
        try ResultPrinter.print(result, ledger: ledger, now: now, json: global.json)
    }
}
