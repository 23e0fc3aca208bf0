import Foundation

/// Damage LMDB itself finds, made in a closed store's file: a branch page of the events
/// tree made to point past the file's end, so a cursor stepping onto that child fails with
/// `MDB_PAGE_NOTFOUND` (the engine's tamper checks never see the event; LMDB refuses the page).
enum PageDamage {
    /// LMDB's page layout (lmdb.h 0.9): pgno (8), pad (2), flags (2), lower (2), upper (2),
    /// then the node offsets; a branch node: child pgno as lo, hi, flags (2 bytes each), key size (2), key.
    static let pageSize = 4096
    static let branchFlag: UInt16 = 0x01

    /// Points the child of every branch page keyed by 8-byte seqs (the events tree's; older
    /// copies of it on free pages too) whose first key is past `seq` at a page that does not
    /// exist. Returns how many pages were changed (0: the tree has no branch yet).
    static func cutEventsTree(after seq: UInt64, in path: String) throws -> Int {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        var changed = 0
        for page in stride(from: 2 * pageSize, to: bytes.count, by: pageSize) {
            guard UInt16(u16(page + 10)) & branchFlag != 0 else { continue }
            let count = (u16(page + 12) - 16) / 2
            guard count >= 3, count < pageSize / 2 else { continue }
            let nodes = (0..<count).map { page + u16(page + 16 + 2 * $0) }
            guard nodes.allSatisfy({ $0 + 8 <= page + pageSize }) else { continue }
            // Every key but the first (a branch's first key is empty) is a seq, increasing.
            let keys: [UInt64?] = nodes.dropFirst().map { n in
                guard u16(n + 6) == 8, n + 16 <= page + pageSize else { return nil }
                return bytes[(n + 8)..<(n + 16)].reduce(0) { $0 << 8 | UInt64($1) }
            }
            let seqs = keys.compactMap { $0 }
            guard seqs.count == keys.count, zip(seqs, seqs.dropFirst()).allSatisfy({ $0 < $1 }),
                  let target = nodes.dropFirst().first(where: { n in
                      bytes[(n + 8)..<(n + 16)].reduce(0) { $0 << 8 | UInt64($1) } > seq
                  }) else { continue }
            for i in 0..<6 { bytes[target + i] = 0xFF }
            changed += 1
        }
        if changed > 0 { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
        return changed
    }
}

extension PageDamage {
    /// The page number of the main database's root (the catalogue of named databases), from
    /// the newer of the two meta pages: pgno at 128 (`mm_dbs[1].md_root`), txnid at 144.
    static func mainRoot(in path: String) throws -> Int {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(2 * pageSize))
        func u64(_ o: Int) -> Int { (0..<8).reduce(0) { $0 | Int(bytes[o + $1]) << (8 * $1) } }
        let newer = u64(144) >= u64(pageSize + 144) ? 0 : pageSize
        return u64(newer + 128)
    }

    /// Makes page `pgno` neither a branch nor a leaf, in place (an open store's map sees it).
    static func unflag(page pgno: Int, in path: String) throws {
        let h = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? h.close() }
        try h.seek(toOffset: UInt64(pgno * pageSize + 10))
        try h.write(contentsOf: Data([0, 0]))
    }
}
