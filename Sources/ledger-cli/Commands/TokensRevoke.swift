import ActionLedger
import ArgumentParser

struct TokensRevoke: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke a token (token.revoked): a running server refuses it at once.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The token id (tok-…).")
    var token: String

    @Option(help: "Why (recorded).")
    var reason = ""

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        try CommandRunner.requireIdentifier(token, option: "the token id", field: "token_id")
        let ledger = try global.open(write: true)
        let record = try ledger.revokeToken(token, reason: reason, now: try global.now(ledger), actor: who.actor,
                                            commandId: who.commandId ?? CommandRequest.newCommandId())
        if global.json { return Output.json(record.json) }
        Human.line("revoked \(record.tokenId) at \(record.revokedAt!.iso8601)")
    }
}
