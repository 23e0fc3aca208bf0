import ActionLedger
import ArgumentParser

struct Projections: LedgerSubcommand {
    static let configuration = CommandConfiguration(abstract: "Each projection's version, checkpoint, lag and digest.")

    @OptionGroup var global: GlobalOptions

    func execute() throws {
        let ledger = try global.open(write: false)
        let statuses = try ledger.query { try $0.statuses() }
        if global.json {
            Output.json(["head": .number(Double(statuses.first?.head ?? 0)), "projections": .array(statuses.map(\.json))])
            return
        }
        for s in statuses {
            var line = "\(s.name)\tv\(s.version)\t\(s.state)\tcheckpoint \(s.checkpoint)\tlag \(s.lag)"
            if let r = s.rebuildCheckpoint { line += "\trebuild at \(r)" }
            print(line)
        }
    }
}
