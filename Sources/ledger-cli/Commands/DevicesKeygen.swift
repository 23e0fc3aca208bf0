import ActionLedger
import ArgumentParser
import Crypto
import Foundation

struct DevicesKeygen: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Write a P-256 key pair for a CLI device: PREFIX.key (PEM PKCS#8, mode 0600) and PREFIX.pub (PEM SPKI).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "Path prefix of the key files.")
    var out: String

    func execute() throws {
        let key = P256.Signing.PrivateKey()
        try KeyFile.createPair(out, privateText: key.pemRepresentation + "\n", publicText: key.publicKey.pemRepresentation + "\n")
        let fingerprint = Hex.encode(SHA256.hash(data: key.publicKey.derRepresentation))
        if global.json {
            Output.json(["fingerprint": .string(fingerprint), "private_key_file": .string(out + ".key"),
                         "public_key_file": .string(out + ".pub")])
        } else {
            Human.line("P-256 key \(fingerprint.prefix(16))…: private \(out).key (mode 0600), public \(out).pub")
        }
    }
}
