import ActionLedger
import ArgumentParser

struct PolicyShow: LedgerSubcommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the policy in force.")

    @OptionGroup var global: GlobalOptions

    func execute() throws {
        let ledger = try global.open(write: false)
        let policy = try ledger.read { try $0.policy() }
        if global.json {
            Output.json(policy.json)
        } else {
            print(policy.json.pretty())
        }
    }
}
