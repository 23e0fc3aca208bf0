import ArgumentParser

@main
struct LedgerCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "ActionLedger: an append-only, tamper-evident approval and audit log on LMDB.",
        discussion: "Every write is one durable LMDB transaction. See Specs/cli.md for every command, its JSON and exit codes.",
        subcommands: [
            // Core (issue 2)
            // Projections and queries (issue 3)
            // Integrity and operations (issue 4)
        ]
    )
}
