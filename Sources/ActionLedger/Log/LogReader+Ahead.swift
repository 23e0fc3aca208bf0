import CLMDB

extension LogReader {
    /// ``forEachRaw(from:_:)`` in a read-only snapshot: reads `window` entries ahead of
    /// `body`, and asks the CPU for each leaf page as the cursor enters it.
    ///
    /// A fold does hundreds of nanoseconds of work between two events, which is enough for
    /// the hardware to lose the stream: then every cursor step and every event's header was
    /// a cache miss of its own (the figures are in Benchmarks/README.md,
    /// seventeenth pass). The cursor's steps for a window run back to back, and a page's
    /// lines are prefetched together, so those misses overlap. A prefetch is a hint: it
    /// never faults and changes no result; a value larger than a page (an overflow page)
    /// only gets its first page asked for. Values stay valid for a read-only transaction's
    /// life (no write can move them), so the window may hold them; a write transaction
    /// takes the plain loop.
    func forEachRawAhead(from: UInt64, _ body: (_ seq: UInt64, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        // On the stack: short reads (a query's tail, a stream's poll) take this path too.
        try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 32) { window in
            try scanAhead(from: from, keys: UnsafeMutableBufferPointer(rebasing: window[0..<16]),
                          values: UnsafeMutableBufferPointer(rebasing: window[16..<32]), body)
        }
    }

    private func scanAhead(from: UInt64, keys: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>,
                           values: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>,
                           _ body: (_ seq: UInt64, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        let window = keys.count
        let cursor = try Cursor(txn, dbs.events)
        defer { cursor.close() }
        let pageSize = UInt(txn.environment.pageSize)
        // Pages lie at multiples of the page size from the map's start, which the OS aligns
        // only to its own page (a store made with 16 KiB pages, read where pages are 4 KiB):
        // the mask is taken relative to it. The map stays put while a read runs (a resize
        // waits for every reader).
        var info = MDB_envinfo()
        mdb_env_info(txn.environment.env, &info)
        let map = UInt(bitPattern: info.me_mapaddr)
        var page: UInt = 0
        var failed: (any Error)?, expected = max(from, 1)
        var entry = try cursor.seek(atLeast: Keys.u64(from))
        while entry != nil {
            var n = 0
            while n < window, let (k, v) = entry {
                keys[n] = k
                values[n] = v
                if map != 0, let base = v.baseAddress, UInt(bitPattern: base) >= map {
                    // LMDB's pages are a power of two in size.
                    let p = map + ((UInt(bitPattern: base) - map) & ~(pageSize - 1))
                    if p != page {
                        page = p
                        var line: UInt = 0
                        while line < pageSize {
                            clmdb_prefetch(UnsafeRawPointer(bitPattern: p + line))
                            line += 64
                        }
                    }
                }
                n += 1
                // A step that fails (a damaged page) fails after the entries before it are
                // visited, as in the plain loop: what a check reports stays where it was.
                do { entry = try cursor.next() } catch {
                    failed = error
                    entry = nil
                }
            }
            for i in 0..<n {
                guard keys[i].count == 8 else { throw LedgerError(.integrityFailure, "event key of \(keys[i].count) bytes") }
                let seq = Keys.readU64(keys[i])
                guard seq == expected else { throw LogReader.missing(expected, next: seq) }
                expected += 1
                guard try body(seq, values[i]) else { return }
            }
        }
        if let failed { throw failed }
    }

    /// A scan met `next` where the log's dense seqs call for `seq`.
    static func missing(_ seq: UInt64, next: UInt64) -> LedgerError {
        LedgerError(.integrityFailure, "the log has no event at seq \(seq) (the next stored is seq \(next)): the store is damaged; "
            + "`ledger verify --deep` names the damage", details: ["seq": .number(Double(seq)), "problem": "missing_seq"])
    }
}
