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
    /// Writes `PREFIX.key` (mode 0600) and `PREFIX.pub`, or neither: both names are checked
    /// before either file is written, so a refusal leaves no orphan `.key`, and a race lost
    /// for the `.pub` name (O_EXCL) takes the `.key` back.
    static func createPair(_ prefix: String, privateText: String, publicText: String) throws {
        for path in [prefix + ".key", prefix + ".pub"] {
            var st = stat()
            if lstat(path, &st) == 0 {
                throw LedgerError(.invalidInput, "\(path) already exists; keys are never overwritten", details: ["path": .string(path)])
            }
        }
        try create(prefix + ".key", privateText, mode: 0o600)
        do {
            try create(prefix + ".pub", publicText, mode: 0o644)
        } catch {
            unlink(prefix + ".key")
            throw error
        }
    }

    /// Creates `path` with `mode` from the start (never a moment world-readable), refusing
    /// to overwrite an existing file.
    static func create(_ path: String, _ text: String, mode: mode_t) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw LedgerError(.invalidInput, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        fchmod(fd, mode)  // exactly `mode`, whatever the umask: 0600 for a key, 0644 for its public half
        let bytes = Array(text.utf8)
        var written = 0
        errno = 0  // a short write leaves it as it was: "short write", not an earlier call's reason
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            written += n
        }
        guard written == bytes.count, fsync(fd) == 0 else {
            let reason = written < bytes.count && errno == 0 ? "short write" : String(cString: strerror(errno))
            // Ours (O_EXCL): a half-written key would block every retry ("already exists").
            unlink(path)
            throw LedgerError(.storage, "cannot write \(path): \(reason); nothing was kept")
        }
    }
}
