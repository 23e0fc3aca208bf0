import ActionLedger
import ArgumentParser

struct Import: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore an export into an EMPTY store, verbatim: all or nothing, chain checked first.",
        discussion: "Refuses a store that holds events (not_empty) and any bad line (invalid_input naming the line and field); nothing is written then.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The export file (JSONL), or - for stdin.")
    var file: String

    func execute() throws {
        let ledger = try global.open(write: true)
        let head = try ledger.importJSONL(path: file)
        if global.json {
            Output.json(["imported": .number(Double(head.seq)), "head_hash": .string(head.hash.hex)])
        } else {
            print("imported \(head.seq) events; head \(head.hash.hex)")
        }
    }
}
