import ActionLedger
import ArgumentParser

struct CheckpointCommand: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpoint",
        abstract: "Print a signed checkpoint (log size, head hash, time, key id, signature) as JSON on stdout.",
        discussion: "Keep it outside the store: `ledger verify --checkpoint FILE --pubkey PREFIX.pub` then proves the log still extends it.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "The private key file (PREFIX.key from `ledger keygen`).")
    var key: String

    func execute() throws {
        let signingKey = try CheckpointSigningKey(json: JSONParser.parse(Output.read(key)))
        try global.requireStore()
        let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
        try global.requireClock(ledger)
        let head = try ledger.read { try $0.head() }
        // Dated by the engine's clock, never before the head it signs (TimeRules: a clock
        // a few seconds behind is raised to the head's time, further behind is refused).
        let headAt = try ledger.read { try $0.event(head.seq)?.event.at }
        let cp = try Checkpoint(head: head, time: try TimeRules.check(global.now(ledger), head: headAt), key: signingKey)
        // Always one line of JSON: the checkpoint is a file format, not a display.
        Output.line(cp.json)
    }
}
