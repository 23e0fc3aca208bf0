extension Ledger {
    /// Renames the store file `replacement` over the store at `path` (`ledger demo --fresh`),
    /// under the store's writer lock and only if `accept` takes its head seq as read there:
    /// a store written since it was inspected is kept, and a process that still has the old
    /// file open has its next write refused rather than lost (``Environment/replaceFile(with:ifUnchanged:)``).
    /// - throws: what `accept` throws (nothing is renamed), or a storage error.
    /// - throws: `busy` when another process has the store open (``requireNotOpenElsewhere(_:)``).
    public static func replaceStore(at path: String, with replacement: String, ifHead accept: (UInt64) throws -> Void) throws {
        try requireNotOpenElsewhere(path)
        let environment = try Environment(path: path)
        try environment.replaceFile(with: replacement) { txn in
            try accept(try LogDatabases.open(txn).map { try LogReader(txn: txn, dbs: $0).head().seq } ?? 0)
        }
    }

    /// Refuses to replace the store at `path` while another process has it open: the lock
    /// file it holds keeps the replaced file's transaction id, which the new file's writers
    /// would build on. A replacement asks this before its work and again under the lock.
    /// - throws: `busy`, nothing replaced.
    public static func requireNotOpenElsewhere(_ path: String) throws {
        if Environment.isOpenElsewhere(path) {
            throw LedgerError(.busy, "\(path) is open in another process (a server, a follower, a command): stop it, then "
                + "replace the store; nothing was replaced")
        }
    }
}
