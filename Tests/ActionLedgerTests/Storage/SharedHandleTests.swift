import Foundation
import Testing
@testable import ActionLedger

/// A store opened twice in one process (the CLI opens it again to run a signed command; a
/// host app may open a `Ledger` per request) uses one LMDB environment: a second
/// `mdb_env_open` would set the lock table up afresh under the first one's readers, and its
/// close would drop the process's locks on the lock file, the first handle's too.
@Suite struct SharedHandleTests {
    /// Whether another process sees the lock file's first byte held: every process with the
    /// store open holds a shared fcntl lock there (LMDB), and a new opener that finds it free
    /// takes the lock file as unused and sets it up anew.
    static func heldElsewhere(_ lock: String) throws -> Bool {
        let probe = """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqii", fcntl.F_WRLCK, 0, 0, 1, 0, 0))
            print("held" if struct.unpack("hhqqii", got)[0] != fcntl.F_UNLCK else "free")
            """
        let out = try Child("/usr/bin/env", ["python3", "-c", probe, lock]).finish(within: 60)
        #expect(out.status == 0, "\(out.stderr)")
        return out.stdout.contains("held")
    }

    /// The readers `mdb_stat -r`, another process, finds in the lock file's table for this process.
    static func readersListed(_ path: String) throws -> Int {
        let out = try Child("/usr/bin/env", ["mdb_stat", "-n", "-r", path]).finish(within: 60)
        #expect(out.stdout.contains("Reader Table Status"), "\(out.stdout)\(out.stderr)")
        let pid = String(getpid())
        return out.stdout.split(separator: "\n").filter { $0.split(separator: " ").first.map(String.init) == pid }.count
    }

    @Test func aSecondOpenSharesTheFirstAndItsCloseKeepsTheLocks() throws {
        let t = try TempLedger()
        try t.ledger.link("iphone")
        // Inside a read transaction of the first handle: a second open leaves its reader
        // slot in the table (a second environment's open had emptied it).
        try t.ledger.environment.read { _ in
            #expect(try Self.readersListed(t.path) == 1)
            let second = try Ledger(path: t.path)
            #expect(try second.read { try $0.deviceState("iphone") } != nil)
            #expect(try Self.readersListed(t.path) == 1)
        }
        // The second handle closed (above): the first still holds the lock file, and writes.
        #expect(try Self.heldElsewhere(t.path + "-lock"))
        try t.ledger.link("laptop")
        // Writes through either handle are the same store's.
        let third = try Ledger(path: t.path)
        try third.link("tablet")
        #expect(try t.ledger.read { try $0.deviceState("tablet") } != nil)
        t.close()
        #expect(try Self.heldElsewhere(t.path + "-lock"))
        withExtendedLifetime(third) {}
    }

    /// Opens beside a handle whose writes keep growing the map: an open reads the shared
    /// map only under the resize lock (its page size had been read from the meta page while
    /// another handle remapped it, which faulted the process now and then).
    @Test func opensBesideAGrowingMapAreSafe() throws {
        let t = try TempLedger()
        let path = t.directory.appendingPathComponent("growing.lmdb").path
        var options = Environment.Options()
        options.mapSize = 64 << 10
        options.unsafeNoSync = true  // a scratch file: only the map's growth is under test
        let writer = try Environment(path: path, options: options)
        let db = try writer.write { try $0.openDatabase("d")! }
        let stop = Locked(false), opens = Locked(0)
        let readOnly = { var o = options; o.readOnly = true; return o }()
        let opener = Thread {
            while !stop.value {
                if let e = try? Environment(path: path, options: readOnly), e.pageSize > 0 { opens.update { $0 += 1 } }
            }
        }
        opener.start()
        let value = [UInt8](repeating: 7, count: 900)
        for i in 0..<300 {
            try writer.write { txn in
                for j in 0..<50 { try txn.put(db, key: Array("\(i)-\(j)".utf8), value: value) }
            }
        }
        stop.update { $0 = true }
        while !opener.isFinished { usleep(1000) }
        #expect(writer.mapSize > 8 << 20 && opens.value > 0, "map \(writer.mapSize), \(opens.value) opens")
    }

    /// A read-only open beside a writable one shares it and still writes nothing; a writable
    /// open beside a read-only one, or one of other durability, is refused, nothing opened.
    @Test func openingsThatCannotShareAreRefused() throws {
        let t = try TempLedger()
        try t.ledger.link("iphone")
        let reader = try Ledger(path: t.path, options: Ledger.Options(readOnly: true))
        expectLedgerError(.readOnly) { try reader.link("laptop") }
        #expect(throws: LMDBError.self) { try reader.environment.write { _ in } }
        #expect(try t.ledger.read { try $0.deviceState("laptop") } == nil)
        var noSync = Ledger.Options()
        noSync.environment.unsafeNoSync = true
        let e = try requireLedgerError(.invalidInput) { _ = try Ledger(path: t.path, options: noSync) }
        #expect(e.message.contains("fsync"))
        withExtendedLifetime(reader) {}
        // A store this process holds only read-only: a writable open must wait for it.
        let other = t.directory.appendingPathComponent("other.lmdb").path
        try Environment(path: other).write { _ = try $0.openDatabase("d") }
        do {
            let readOnly = try Environment(path: other, options: { var o = Environment.Options(); o.readOnly = true; return o }())
            let busy = try requireLedgerError(.busy) { _ = try Environment(path: other) }
            #expect(busy.message.contains("read-only in this process"))
            withExtendedLifetime(readOnly) {}
        }
        // Closed, it opens writable.
        #expect(try Environment(path: other).write { _ in true })
    }
}
