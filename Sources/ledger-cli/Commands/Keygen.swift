import ActionLedger
import ArgumentParser
import Foundation

struct Keygen: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an Ed25519 key pair for signing checkpoints: PREFIX.key (mode 0600) and PREFIX.pub.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "Path prefix of the key files.")
    var out: String

    func execute() throws {
        let key = CheckpointSigningKey()
        try KeyFile.createPair(out, privateText: key.json.serialized() + "\n", publicText: key.publicKey.json.serialized() + "\n")
        if global.json {
            Output.json(["key_id": .string(key.publicKey.keyId), "private_key_file": .string(out + ".key"),
                         "public_key_file": .string(out + ".pub")])
        } else {
            Human.line("key \(key.publicKey.keyId): private \(out).key (mode 0600), public \(out).pub")
        }
    }
}

enum KeyFile {
    /// Writes `PREFIX.key` (mode 0600) and `PREFIX.pub` (0644), each written whole under no
    /// name (``NewFile``) and then linked to its own, never over an existing file: a kill
    /// part-way had left a torn `.key` that no retry could replace ("keys are never
    /// overwritten"). Both names are checked first; a kill in the instant between the two
    /// links leaves the whole `.key` alone (its public half is in it).
    /// - throws: `invalid_input` for a prefix that names no file (empty, or a folder:
    ///   `dir/` had made the hidden `dir/.key`) or a name already taken.
    static func createPair(_ prefix: String, privateText: String, publicText: String) throws {
        guard !prefix.isEmpty, !prefix.hasSuffix("/"), !["", ".", ".."].contains(PathName.name(of: prefix)) else {
            throw LedgerError(.invalidInput, "--out \(prefix.isEmpty ? "(empty)" : prefix): expected a file name prefix, such as "
                + "keys/checkpoint", details: ["field": "out"])
        }
        for path in [prefix + ".key", prefix + ".pub"] where NewFile.exists(path) {
            throw LedgerError(.invalidInput, "\(path) already exists; keys are never overwritten", details: ["path": .string(path)])
        }
        let key = try NewFile(prefix + ".key"), pub = try NewFile(prefix + ".pub")
        fchmod(pub.fd, 0o644)  // the public half is for anyone to read
        // Unnamed until whole: a write that fails leaves nothing under either name.
        try NewFile.writeAll(key.fd, Array(privateText.utf8), prefix + ".key (nothing was kept)")
        try NewFile.writeAll(pub.fd, Array(publicText.utf8), prefix + ".pub (nothing was kept)")
        try key.commit()
        do {
            try pub.commit()
        } catch {
            unlink(prefix + ".key")
            throw error
        }
    }
}
