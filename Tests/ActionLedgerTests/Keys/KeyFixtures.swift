import Crypto
import Foundation
@testable import ActionLedger

/// Keys and signed requests for the device-key tests, made with swift-crypto.
struct TestDeviceKey {
    let privateKey = P256.Signing.PrivateKey()
    var spki: [UInt8] { Array(privateKey.publicKey.derRepresentation) }
    var pem: String { privateKey.pemRepresentation }

    func key(_ protection: KeyProtection = .device, trust: KeyTrust = .firstUse) throws -> DeviceKey {
        try DeviceKey(spki: spki, protection: protection, trust: trust)
    }

    func sign(_ bytes: [UInt8]) throws -> [UInt8] { Array(try privateKey.signature(for: bytes).rawRepresentation) }
}

extension Ledger {
    /// Links `device` for quinn (org quinn-co) with `key`'s public key, first use or introduced.
    func linkKeyed(_ device: String, _ key: TestDeviceKey, protection: KeyProtection = .device, platform: Platform = .ios,
                   person: String = "quinn", introducer: (String, TestDeviceKey)? = nil, now: Timestamp = t0) throws {
        var k = try key.key(protection)
        if let (by, introducerKey) = introducer {
            let storeId = try read { try $0.storeId() }!
            let statement = Statement.link(storeId: storeId, org: "quinn-co", person: person, device: device,
                                           platform: platform, key: k, introducedBy: by)
            k.trust = .introducedBy(device: by, signature: try introducerKey.sign(statement))
        }
        try run(.linkKeyedDevice(device: device, person: person, org: "quinn-co", label: "\(device) label",
                                 platform: platform, key: k), now: now)
    }

    /// Runs `command` signed by `key` over the statement the engine expects (or over
    /// `tamper`ed statement inputs), claiming `claimedAt`.
    @discardableResult
    func signed(_ command: Command, _ key: TestDeviceKey, commandId: String = CommandRequest.newCommandId(),
                now: Timestamp = t0, claimedAt: Timestamp? = nil,
                tamper: (inout Statement.Tap) -> Void = { _ in }) throws -> CommandResult {
        var statement = try self.statement(for: command, commandId: commandId, claimedAt: claimedAt ?? now)
        tamper(&statement)
        let proof = ProofInput(claimedAt: claimedAt ?? now, signature: try key.sign(statement.bytes))
        return try execute(CommandRequest(command, commandId: commandId, now: now, proof: proof))
    }
}

/// A store with a store id (seq 1) and one pending action of quinn's.
func keyedStore(stakes: Stakes = .medium) throws -> TempLedger {
    let t = try TempLedger()
    try t.ledger.create(StoreCreation(testClock: true, demo: false), now: t0)
    try t.ledger.run(.propose(proposal("a1", stakes: stakes)))
    return t
}

extension TempLedger {
    /// Exports the store to a new file in its directory and runs Specs/tools/verify_export.py
    /// on it: the file's path and the verifier's output.
    func exportAndVerifyIndependently() throws -> (path: String, python: LedgerProcess.Output) {
        let path = directory.appendingPathComponent("export-\(UUID().uuidString).jsonl").path
        var bytes: [UInt8] = []
        try ledger.exportJSONL { bytes += $0 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, try IndependentVerifierTests.runPython([IndependentVerifierTests.script, path]))
    }
}
