import ActionLedger
import ArgumentParser
import Foundation

struct Import: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore an export into a new or EMPTY store: chain checked, every decision re-judged, all or nothing.",
        discussion: """
            Refuses a store that holds events (not_empty), any bad line (invalid_input naming the line \
            and field) and any event the engine could not have appended (replay_mismatch naming the \
            line and rule). A refused import leaves nothing behind: a new store is built beside --db and \
            moved into place only on success. The chain is unkeyed, so an import proves nothing about \
            origin unless --checkpoint and --pubkey show the file extends a checkpoint you signed.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The export file (JSONL), or - for stdin.")
    var file: String

    @Option(help: "A signed checkpoint (from `ledger checkpoint`) the export must extend.")
    var checkpoint: String?

    @Option(help: "The public key (PREFIX.pub) the checkpoint must be signed with.")
    var pubkey: String?

    func execute() throws {
        if global.readOnly { throw LedgerError(.readOnly, "import writes a store; it cannot run with --read-only") }
        guard (checkpoint == nil) == (pubkey == nil) else {
            throw LedgerError(.invalidInput, "--checkpoint and --pubkey go together")
        }
        var cp: Checkpoint?
        if let checkpoint, let pubkey {
            let key = try CheckpointPublicKey(json: JSONParser.parse(Output.read(pubkey)))
            cp = try Checkpoint(json: JSONParser.parse(Output.read(checkpoint)))
            try cp!.verifySignature(with: key)
        }
        let path = global.path
        let head: LogHead
        // lstat: a symlink there (dangling or not) is something, refused like any non-store.
        if NewFile.exists(path) {
            // An existing (empty) store: a refusal rolls the one transaction back. Anything
            // else at the path (an empty file, a directory) is left alone.
            do { try global.requireStore() } catch {
                throw LedgerError(.invalidInput, "\(path) exists and is not a store; import builds a new store at a path "
                    + "where nothing is, or fills an empty store")
            }
            head = try global.open(write: true).importJSONL(path: file, checkpoint: cp)
        } else {
            try NewFile.requireNewPath(path)
            try Environment.requireUsableLockFile(for: path)
            let building = try ScratchStore.make(beside: path, kind: "importing")
            defer {
                AbandonedScratch.removeOwn(building)
            }
            head = try Ledger(path: building).importJSONL(path: file, checkpoint: cp)
            try Environment.makeLockFile(for: path)
            // link(2), not rename(2): a store created at the path while the import ran
            // (`ledger init`, another import) is kept, never replaced.
            guard link(building, path) == 0 else {
                if errno == EEXIST {
                    throw LedgerError(.notEmpty, "\(path) was created while the import ran; it is left as it is and nothing was "
                        + "imported into it")
                }
                throw LedgerError(.storage, "cannot move the imported store to \(path): \(String(cString: strerror(errno)))")
            }
            Environment.syncDirectory(of: path)
        }
        if global.json {
            var o: JSONObject = ["imported": .number(Double(head.seq)), "head_hash": .string(head.hash.hex)]
            if let cp { o["extends_checkpoint"] = ["log_size": .number(Double(cp.logSize)), "key_id": .string(cp.keyId)] }
            Output.json(.object(o))
        } else {
            Human.line("imported \(head.seq) events; head \(head.hash.hex)"
                + (cp.map { "; extends checkpoint at \($0.logSize) signed by \($0.keyId)" } ?? "; origin unproven (no --checkpoint)"))
        }
    }
}
