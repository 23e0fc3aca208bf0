import ArgumentParser

struct Tokens: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Issue, list and revoke the bearer tokens `ledger serve` accepts (device, specialist, auditor).",
        subcommands: [TokensIssue.self, TokensList.self, TokensRevoke.self])
}
