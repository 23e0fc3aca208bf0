import ActionLedger
import ArgumentParser

/// Options of every command a person makes on an action from a device.
struct ActionOptions: ParsableArguments {
    @Argument(help: "The action id.")
    var action: String

    @Option(help: "The device the person acts from (must be linked to her and not revoked).")
    var device: String

    @Option(name: .customLong("command-id"), help: "Idempotency key; replaying it returns the original result.")
    var commandId: String?

    @Option(help: "Sign as the device with this PEM P-256 private key (`ledger devices keygen`).")
    var key: String?

    @Option(help: "The device's proof, JSON {\"format\":\"p256\",\"signature\": base64} (FILE, or - for stdin); needs --claimed-at.")
    var proof: String?

    @Option(name: .customLong("claimed-at"), help: "The time the device claims it signed (default with --key: the engine clock).")
    var claimedAt: String?

    /// Runs `command` on the writer and prints the result; with `--key` or `--proof`, the
    /// device's signature over the command's statement goes with it (Specs/statements.md).
    func run(_ command: Command, global: GlobalOptions) throws {
        guard key != nil || proof != nil else {
            if claimedAt != nil { throw LedgerError(.invalidInput, "--claimed-at goes with --key or --proof") }
            return try CommandRunner.run(command, commandId: commandId, actor: "person", global: global)
        }
        guard key == nil || proof == nil else { throw LedgerError(.invalidInput, "give --key or --proof, not both") }
        // The statement names the command id, so it is fixed before signing.
        let id = commandId ?? CommandRequest.newCommandId()
        var seen: Digest?
        if case .tap(_, _, _, _, let s) = command { seen = s }
        try CommandRunner.run(command, commandId: id, actor: "person", global: global) { ledger, now in
            let claimed = try claimedAt.map { try Clock.parse($0, option: "--claimed-at") }
            if let key {
                let statement = try ledger.statement(for: command, commandId: id, claimedAt: claimed ?? now, contentHash: seen)
                let pem = String(decoding: try Output.read(key), as: UTF8.self)
                let signed = try P256Signature.sign(statement.bytes, pemPrivateKey: pem)
                return ProofInput(claimedAt: statement.claimedAt, signature: signed.signature,
                                  contentHash: statement.contentHash, statement: statement.bytes)
            }
            guard let claimed else { throw LedgerError(.invalidInput, "--proof needs --claimed-at: the time the statement names") }
            let text = try Output.read(proof!)
            return try ProofInput(json: try JSONParser.parse(text), claimedAt: claimed,
                                  contentHash: seen)
        }
    }
}

/// The options of the three taps.
struct TapOptions: ParsableArguments {
    @OptionGroup var action: ActionOptions

    @Option(name: .customLong("content-hash"),
            help: "The content hash the client showed; refused as stale_content if the action was edited since.")
    var contentHash: String?

    func seenContent() throws -> Digest? {
        guard let contentHash else { return nil }
        guard let d = Digest(hex: contentHash) else {
            throw LedgerError(.invalidInput, "--content-hash: expected 64 hex digits", details: ["field": "content_hash"])
        }
        return d
    }
}
