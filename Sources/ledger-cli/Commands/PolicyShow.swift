import ActionLedger
import ArgumentParser

struct PolicyShow: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print the policy in force for an org (without --org: the latest set in any org).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "The org whose policy to print: a policy.set governs its own org's actions only.")
    var org: String?

    func execute() throws {
        try CommandRunner.requireIdentifier(org, option: "--org", field: "org")
        let ledger = try global.open(write: false)
        let policy = try ledger.read { r in try org.map { try r.policy(org: $0) } ?? r.policy() }
        if global.json {
            Output.json(policy.json)
        } else {
            print(policy.json.pretty())
        }
    }
}
