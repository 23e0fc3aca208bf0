import ActionLedger
import ArgumentParser

struct RelyingPartySet: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Record store.relying_party: the rpId and allowed origins of webauthn proofs from now on.")

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("rp-id"), help: "The WebAuthn rpId, a lowercase domain (e.g. ledger.example.com).")
    var rpId: String

    @Option(name: .customLong("origin"), help: "An allowed origin, https://HOST[:PORT] or http://localhost[:PORT] (repeatable).")
    var origins: [String]

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        try CommandRunner.run(.setRelyingParty(try RelyingParty(rpId: rpId, origins: origins)), commandId: who.commandId,
                              actor: who.actor, global: global)
    }
}
