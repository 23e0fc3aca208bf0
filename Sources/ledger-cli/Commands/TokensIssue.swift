import ActionLedger
import ArgumentParser

struct TokensIssue: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "issue",
        abstract: "Issue a token and print its secret (once: only its SHA-256 is kept, in a token.issued event).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "The org the token works in.")
    var org: String

    @Option(help: "device (acts as --device), specialist (proposes as --agent) or auditor (reads the org).")
    var scope: String

    @Option(help: "device scope: the linked device it acts as.")
    var device: String?

    @Option(help: "specialist scope: the agent it proposes as.")
    var agent: String?

    @Option(help: "How long it lives, e.g. 30d, 12h (default 30d).")
    var expires = "30d"

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        guard let s = TokenScope(rawValue: scope) else {
            throw LedgerError(.invalidInput, "--scope: expected device, specialist or auditor", details: ["field": "scope"])
        }
        if device != nil && s != .device { throw LedgerError(.invalidInput, "--device goes with --scope device") }
        if agent != nil && s != .specialist { throw LedgerError(.invalidInput, "--agent goes with --scope specialist") }
        guard let lifetime = DurationText.milliseconds(expires) else {
            throw LedgerError(.invalidInput, "--expires: expected a duration such as 30d or 12h, got \(expires)", details: ["field": "expires"])
        }
        try CommandRunner.requireIdentifier(org, option: "--org", field: "org")
        try CommandRunner.requireIdentifier(device, option: "--device", field: "device")
        try CommandRunner.requireIdentifier(agent, option: "--agent", field: "agent")
        try CommandRunner.requireIdentifier(who.actor, option: "--actor", field: "actor")
        try CommandRunner.requireIdentifier(who.commandId, option: "--command-id", field: "command_id")
        let ledger = try global.open(write: true)
        let now = try global.now(ledger)
        let issued = try ledger.issueToken(org: org, scope: s, subject: device ?? agent, expiresAt: now.adding(milliseconds: lifetime),
                                           now: now, actor: who.actor, commandId: who.commandId ?? CommandRequest.newCommandId())
        if global.json {
            guard case .object(var o) = issued.record.json else { return }
            o["secret"] = .string(issued.secret)
            Output.json(.object(o))
        } else {
            Human.line("issued \(issued.record.tokenId) (\(s.rawValue)\(issued.record.issue.subject.map { " as \($0)" } ?? ""), org \(org), "
                + "expires \(issued.record.issue.expiresAt.iso8601)); its secret, shown only now:")
            print(issued.secret)
        }
        // The secret is kept nowhere else: output that failed leaves a live token nobody holds,
        // so the failure names it, for the operator to revoke.
        do {
            try StandardStreams.flush()
        } catch let e as LedgerError {
            let id = issued.record.tokenId
            var details = e.details
            details["token_id"] = .string(id)
            throw LedgerError(e.code, e.message + "; token \(id) was issued but its secret is lost: revoke it "
                + "(`ledger tokens revoke \(id)`)", details: details)
        }
    }
}
