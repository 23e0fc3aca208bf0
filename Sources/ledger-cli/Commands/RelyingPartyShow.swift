import ActionLedger
import ArgumentParser

struct RelyingPartyShow: LedgerSubcommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the relying party in force (null when none).")

    @OptionGroup var global: GlobalOptions

    func execute() throws {
        let ledger = try global.open(write: false)
        let rp = try ledger.read { try $0.relyingParty() }
        let json: JSON = rp.map { ["rp_id": .string($0.rpId), "origins": .array($0.origins.map(JSON.string))] } ?? .null
        if global.json { Output.json(json) } else { print(rp.map { "\($0.rpId): \($0.origins.joined(separator: " "))" } ?? "none") }
    }
}
