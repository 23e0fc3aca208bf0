import ActionLedger
import ArgumentParser
import Foundation

/// Workers for the crash, contention and map-growth tests and for measurements. They
/// write synthetic data, so they are a tool of their own, built with the tests
/// (`swift build --build-tests`, or `--product ledger-stress`), never part of `ledger`.
@main
struct LedgerStress: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-stress",
        abstract: "ActionLedger test and measurement workers (writes synthetic data; not for real stores).",
        subcommands: [StressTorture.self, StressContend.self, StressGrow.self, StressRead.self, StressFill.self])
}

/// `--db`, as the workers' parents pass it.
struct StoreOptions: ParsableArguments {
    @Option(help: "The ledger file.") var db: String

    var path: String { db }

    /// Opens the store for writing.
    func open() throws -> Ledger { try Ledger(path: db) }

    /// `LEDGER_NOW` when set (the tests fix the clock), else the system time.
    func now() throws -> Timestamp {
        if let fixed = ProcessInfo.processInfo.environment["LEDGER_NOW"] {
            guard let t = Timestamp(iso8601: fixed) else { throw ValidationError("LEDGER_NOW is not an ISO-8601 time") }
            return t
        }
        return Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}

/// Writes `text` to stdout at once (no buffering): a line printed is a line the parent sees.
func emit(_ text: String) {
    let bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + done, $0.count - done) }
        if n <= 0 { if errno == EINTR { continue }; return }
        done += n
    }
}

/// A synthetic low-stakes proposal that waits for a tap (confidence under the auto-ship floor).
func syntheticProposal(_ id: String, person: String = "quinn", stakes: Stakes = .low, text: String = "New set tonight") -> ProposalInput {
    ProposalInput(actionId: id, org: "quinn-co", person: person,
                  proposal: Proposal(specialist: Specialist(name: "Sasha", agent: "content-onlyfans"), surface: "onlyfans",
                                     kind: "publish_post", target: Target(type: "account", id: "of:quinn"), stakes: stakes,
                                     confidence: 0.5, preview: Preview(text: text, assets: 3, price: 9.99),
                                     rationale: "Fans are online now"))
}

/// Links `device` to quinn unless it already is.
func ensureDevice(_ ledger: Ledger, _ device: String, now: Timestamp) throws {
    if try ledger.read({ try $0.deviceState(device) }) != nil { return }
    do {
        try ledger.execute(CommandRequest(.linkDevice(device: device, person: "quinn", org: "quinn-co", label: device,
                                                      platform: .cli), commandId: "link-\(device)", now: now))
    } catch let e as LedgerError where e.code == .duplicateDevice {}
}

/// The crash test's child: proposes and approves in a loop, printing `SEQ HASH` for each
/// event only after the commit that holds it returned (so every printed line is durable).
struct StressTorture: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "torture", abstract: "Append and approve until killed.")
    @OptionGroup var global: StoreOptions
    @Option(help: "Stop after this many rounds (default: until killed).") var rounds = Int.max

    func run() throws {
        let ledger = try global.open()
        let now = try global.now()
        try ensureDevice(ledger, "torture-phone", now: now)
        let run = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        func ack(_ results: [CommandResult]) {
            emit(results.flatMap(\.events).map { "\($0.seq) \($0.hash.hex)\n" }.joined())
        }
        for i in 0..<rounds {
            let id = "t-\(run)-\(i)"
            if i % 5 == 4 {
                // An all-or-nothing batch: three proposals in one transaction.
                ack(try ledger.execute(batch: (0..<3).map {
                    CommandRequest(.propose(syntheticProposal("\(id)-\($0)")), now: now)
                }))
            } else {
                ack([try ledger.execute(CommandRequest(.propose(syntheticProposal(id)), now: now))])
                ack([try ledger.execute(CommandRequest(.tap(.approve, actionId: id, device: "torture-phone"), now: now))])
            }
        }
    }
}

/// Fills a ledger quickly for measurements: proposals and approvals in batches.
struct StressFill: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fill", abstract: "Append COUNT events in batches.")
    @OptionGroup var global: StoreOptions
    @Option(help: "Events to append (about).") var count = 1_000_000
    @Flag(name: .customLong("unsafe-no-sync"), help: "MDB_NOSYNC for a throwaway fixture.") var noSync = false

    func run() throws {
        var options = Ledger.Options()
        options.environment.unsafeNoSync = noSync
        options.environment.mapSize = 1 << 30
        let ledger = try Ledger(path: global.path, options: options)
        let now = try global.now()
        try ensureDevice(ledger, "fill-phone", now: now)
        let start = try ledger.read { try $0.head().seq }
        var n = 0
        while UInt64(n * 2) + start < UInt64(count) {
            let ids = (n..<n + 500).map { "f-\(start)-\($0)" }
            _ = try ledger.execute(batch: ids.map { CommandRequest(.propose(syntheticProposal($0)), now: now) })
            _ = try ledger.execute(batch: ids.map { CommandRequest(.tap(.approve, actionId: $0, device: "fill-phone"), now: now) })
            n += 500
        }
        if noSync { try ledger.environment.sync() }
        print(try ledger.read { try $0.head().seq })
    }
}
