import ActionLedger
import ArgumentParser

struct TokensList: LedgerSubcommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List every token ever issued (never a secret).")

    @OptionGroup var global: GlobalOptions

    func execute() throws {
        let ledger = try global.open(write: false)
        let now = try global.now(ledger)
        let tokens = try ledger.read { try $0.tokens() }.values.sorted { ($0.issuedAt, $0.tokenId) < ($1.issuedAt, $1.tokenId) }
        if global.json {
            Output.json(["tokens": .array(tokens.map(\.json))])
            return
        }
        for t in tokens {
            let status = t.revokedAt.map { "revoked \($0.iso8601)" } ?? (t.isLive(at: now) ? "live" : "expired")
            Human.row([t.tokenId, t.org, t.issue.scope.rawValue, t.issue.subject ?? "-", "expires \(t.issue.expiresAt.iso8601)", status])
        }
    }
}
