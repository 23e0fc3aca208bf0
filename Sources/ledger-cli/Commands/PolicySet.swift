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

    @Option(help: "The organisation whose actions the policy governs (it applies to no other).")
    var org: String

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        let document = try PolicyDocument(json: try JSONParser.parse(try Output.read(file)))
        try CommandRunner.run(.setPolicy(document, org: org), commandId: who.commandId, actor: who.actor,
                              global: global)
    }
}
