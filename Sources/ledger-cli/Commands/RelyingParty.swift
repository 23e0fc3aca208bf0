import ArgumentParser

struct RelyingPartyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relying-party", abstract: "Show or set the WebAuthn relying party that webauthn proofs are checked against.",
        subcommands: [RelyingPartyShow.self, RelyingPartySet.self])
}
