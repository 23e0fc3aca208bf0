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
        // Both names are checked before either file is written, so a refusal leaves no
        // orphan; O_EXCL in KeyFile.create still guards the race with another writer.
        for path in [out + ".key", out + ".pub"] {
            var st = stat()
            if lstat(path, &st) == 0 {
                throw LedgerError(.invalidInput, "\(path) already exists; keys are never overwritten", details: ["path": .string(path)])
            }
        }
        let key = P256.Signing.PrivateKey()
        try KeyFile.create(out + ".key", key.pemRepresentation + "\n", mode: 0o600)
        do {
            try KeyFile.create(out + ".pub", key.publicKey.pemRepresentation + "\n", mode: 0o644)
        } catch {
            unlink(out + ".key")
            throw error
        }
        let fingerprint = Array(SHA256.hash(data: key.publicKey.derRepresentation)).map { String(format: "%02x", $0) }.joined()
        if global.json {
            Output.json(["fingerprint": .string(fingerprint), "private_key_file": .string(out + ".key"),
                         "public_key_file": .string(out + ".pub")])
        } else {
            Human.line("P-256 key \(fingerprint.prefix(16))…: private \(out).key (mode 0600), public \(out).pub")
        }
    }
}
