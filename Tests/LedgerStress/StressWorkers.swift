import ActionLedger
import ArgumentParser
import Foundation

/// The contention test's child: threads tap review, approve and dismiss on the same
/// actions with deterministic command ids (so a rerun is an offline-queue replay), one
/// JSON line per command on stdout.
struct StressContend: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "contend", abstract: "Race taps on shared actions.")
    @OptionGroup var global: StoreOptions
    @Option(help: "This process's number.") var process: Int
    @Option(help: "Threads in this process.") var threads = 4
    @Option(help: "Comma-separated action ids.") var actions: String
    @Option(help: "Random seed for the order of operations.") var seed: UInt64 = 1

    func run() throws {
        let ledger = try global.open()
        let now = try global.now()
        let ids = actions.split(separator: ",").map(String.init)
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            let device = "dev-\(process)-\(t)"
            var rng = SeededRandom(seed: seed &+ UInt64(process * 1000 + t))
            var work: [(String, String)] = []
            for id in ids { for op in ["review", "approve", "dismiss"] { work.append((id, op)) } }
            work.shuffle(using: &rng)
            for (id, op) in work {
                let command: Command = switch op {
                case "review": .tap(.review, actionId: id, device: device)
                case "approve": .tap(.approve, actionId: id, device: device)
                default: .dismiss(actionId: id, device: device, reason: "not now")
                }
                let commandId = "c-\(process)-\(t)-\(id)-\(op)"
                var line: JSONObject = ["action": .string(id), "op": .string(op), "device": .string(device),
                                        "command_id": .string(commandId)]
                do {
                    let r = try ledger.execute(CommandRequest(command, commandId: commandId, now: now))
                    line["ok"] = true
                    line["appended"] = .number(Double(r.replayed ? 0 : r.events.count))
                    line["replayed"] = .bool(r.replayed)
                } catch let e as LedgerError {
                    line["ok"] = false
                    line["code"] = .string(e.code.rawValue)
                    line["decided_device"] = e.details["decided_device"] ?? .null
                } catch {
                    line["ok"] = false
                    line["code"] = .string("storage_error")
                }
                lock.lock()
                emit(JSON.object(line).serialized() + "\n")
                lock.unlock()
            }
        }
    }
}


/// The map-growth test's writer: opens with a tiny map and appends large proposals one
/// commit at a time, so the map must grow under it (and under the readers).
struct StressGrow: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "grow", abstract: "Append big events from a tiny map.")
    @OptionGroup var global: StoreOptions
    @Option(name: .customLong("map-size"), help: "Initial map size in bytes.") var mapSize = 256 << 10
    @Option(help: "Proposals to append.") var count = 500
    @Option(help: "Writer name (keeps action ids apart).") var writer = "w"

    func run() throws {
        var options = Ledger.Options()
        options.environment.mapSize = mapSize
        let ledger = try Ledger(path: global.path, options: options)
        let now = try global.now()
        try ensureDevice(ledger, "grow-\(writer)", now: now)
        let text = String(repeating: "x", count: 8000)
        for i in 0..<count {
            try ledger.execute(CommandRequest(.propose(syntheticProposal("g-\(writer)-\(i)", text: text)), now: now))
        }
        emit("\(ledger.environment.mapSize)\n")
    }
}

/// The map-growth test's reader: keeps reading snapshots (head, the event at the head, its
/// stored hash) until the head reaches `until`; prints how many snapshots it read.
struct StressRead: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Read snapshots until a head seq.")
    @OptionGroup var global: StoreOptions
    @Option(help: "Stop once the head reaches this seq.") var until: UInt64
    @Option(help: "Give up after this many seconds.") var timeout: Double = 300

    func run() throws {
        let ledger = try Ledger(path: global.path, options: Ledger.Options(readOnly: true))
        let deadline = Date().addingTimeInterval(timeout)
        var reads = 0
        while true {
            let head = try ledger.read { r -> LogHead in
                let head = try r.head()
                if head.seq > 0 {
                    guard let e = try r.event(head.seq), e.hash == head.hash else {
                        throw LedgerError(.integrityFailure, "snapshot at \(head.seq): the head event does not match the head record")
                    }
                }
                return head
            }
            reads += 1
            if head.seq >= until { break }
            guard Date() < deadline else { throw LedgerError(.busy, "head stuck at \(head.seq) after \(timeout)s") }
        }
        _ = try ledger.verify()
        emit("\(reads)\n")
    }
}
