import Foundation
import Testing
@testable import ActionLedger

/// A real LMDB store in a fresh temporary directory, removed at deinit.
final class TempLedger {
    let directory: URL
    let path: String
    private(set) var ledger: Ledger!

    init(options: Ledger.Options = Ledger.Options()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("al-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("ledger.lmdb").path
        ledger = try Ledger(path: path, options: options)
    }

    /// Closes the store (its directory stays until deinit).
    func close() { ledger = nil }

    /// Closes and reopens the store (a restart); `retrying` as ``openWhenReleased(_:)``.
    func reopen(options: Ledger.Options = Ledger.Options(), retrying: Bool = false) throws {
        ledger = nil
        ledger = retrying ? try openWhenReleased { try Ledger(path: path, options: options) } : try Ledger(path: path, options: options)
    }

    /// Reopens a store written by an older build: writes are refused (`migration_required`)
    /// until `migrate` converts it; then reopens it converted. Returns the migration's report.
    @discardableResult
    func migrate(options: Ledger.Options = Ledger.Options()) throws -> MigrationReport {
        try reopen(options: options)
        #expect(ledger.migrationNeeded != nil)
        expectLedgerError(.migrationRequired) { try ledger.execute(CommandRequest(.propose(proposal("never")), now: t0)) }
        let report = try ledger.migrate()
        try reopen(options: options)
        #expect(ledger.migrationNeeded == nil)
        return report
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// Opens with `open`, retrying for a while when a handle this process just closed still
/// claims the file under another lock file: an OFD lock lives while any descriptor of its
/// open file description does, and a child another test is spawning (fork, then exec, which
/// closes it) holds a copy for a moment; or when a background fold still holds a replaced
/// file's handle under the path's lock file. Only tests that spawn processes beside closing one
/// name of a store and opening another need this; the `ledger` CLI and server never do.
func openWhenReleased(_ open: () throws -> Ledger) throws -> Ledger {
    let deadline = Date().addingTimeInterval(10)
    while true {
        do { return try open() } catch let e as LedgerError where e.code == .invalidInput
            && (e.message.contains("another name") || e.message.contains("replaced meanwhile"))
            && Date() < deadline {
            usleep(10_000)
        }
    }
}

/// A fixed clock for tests.
func at(_ iso: String) -> Timestamp { Timestamp(iso8601: iso)! }

let t0 = at("2026-11-22T09:00:00Z")

func proposal(_ id: String, person: String = "quinn", stakes: Stakes = .medium, confidence: Double = 0.5,
              kind: String = "publish_post", surface: String = "onlyfans", text: String = "New set tonight",
              expiresAt: Timestamp? = nil) -> ProposalInput {
    ProposalInput(actionId: id, org: "quinn-co", person: person,
                  proposal: Proposal(specialist: Specialist(name: "Sasha", agent: "content-onlyfans"), surface: surface,
                                     kind: kind, target: Target(type: "account", id: "of:quinn"), stakes: stakes,
                                     confidence: confidence, preview: Preview(text: text, assets: 3, price: 9.99),
                                     rationale: "Fans are online now", expiresAt: expiresAt))
}

extension Ledger {
    @discardableResult
    func run(_ command: Command, now: Timestamp = t0, commandId: String? = nil) throws -> CommandResult {
        try execute(CommandRequest(command, commandId: commandId, now: now))
    }

    func link(_ device: String, person: String = "quinn", platform: Platform = .ios) throws {
        try run(.linkDevice(device: device, person: person, org: "quinn-co", label: "\(device) label", platform: platform))
    }
}

/// Makes a new store at `path` on a test clock (`store.created` with `test_clock: true`,
/// seq 1), as `ledger init --test-clock` does: the only kind that honours `LEDGER_NOW`.
func createTestClockStore(at path: String, now: Timestamp = at("2026-11-22T08:00:00Z")) throws {
    let l = try Ledger(path: path)
    try l.create(StoreCreation(testClock: true, demo: false), now: now)
}
