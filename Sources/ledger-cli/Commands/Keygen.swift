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
        // Both names are checked before either file is written: a refusal leaves no orphan
        // `.key` behind. (O_EXCL in KeyFile.create still guards the race with another writer.)
        for path in [out + ".key", out + ".pub"] {
            var st = stat()
            if lstat(path, &st) == 0 {
                throw LedgerError(.invalidInput, "\(path) already exists; keys are never overwritten", details: ["path": .string(path)])
            }
        }
        let key = CheckpointSigningKey()
        try KeyFile.create(out + ".key", key.json.serialized() + "\n", mode: 0o600)
        do {
            try KeyFile.create(out + ".pub", key.publicKey.json.serialized() + "\n", mode: 0o644)
        } catch {
            unlink(out + ".key")  // lost a race for the .pub name: take back the half-written pair
            throw error
        }
        if global.json {
            Output.json(["key_id": .string(key.publicKey.keyId), "private_key_file": .string(out + ".key"),
                         "public_key_file": .string(out + ".pub")])
        } else {
            Human.line("key \(key.publicKey.keyId): private \(out).key (mode 0600), public \(out).pub")
        }
    }
}

enum KeyFile {
    /// Creates `path` with `mode` from the start (never a moment world-readable), refusing
    /// to overwrite an existing file.
    static func create(_ path: String, _ text: String, mode: mode_t) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard fd >= 0 else {
            throw LedgerError(.invalidInput, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        fchmod(fd, mode)  // the umask may have narrowed it; never widened beyond `mode`
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count, fsync(fd) == 0 else {
            throw LedgerError(.storage, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
