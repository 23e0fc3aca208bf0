import Foundation
import Testing
@testable import ActionLedger

/// The CLI of recovery keys: registered with the first keyed device (`devices link …
/// --recovery-key`), replaced (`devices recovery-key set`), shown, and used to link a device
/// once every keyed device is revoked (`devices link … --recovered-by-key`).
@Suite struct RecoveryCLITests {
    let store: ProcessFixture

    init() throws { store = try ProcessFixture("recovery") }

    @discardableResult
    func ledger(_ args: String...) throws -> LedgerProcess.Output { try store.ledger(args) }

    func link(_ device: String, _ extra: String...) throws -> LedgerProcess.Output {
        try store.ledger(["devices", "link", device, "--person", "quinn", "--org", "quinn-co", "--label", device, "--platform", "cli",
                          "--public-key", store.path("\(device).pub"), "--key-protection", "device"] + extra)
    }

    @Test func aPersonWhoLostEveryDeviceRecoversWithHerKey() throws {
        for name in ["phone", "laptop", "rec", "rec2"] { #expect(try ledger("devices", "keygen", "--out", store.path(name)).status == 0) }
        var r = try link("phone", "--recovery-key", store.path("rec.pub"), "--json")
        #expect(r.status == 0 && r.stdout.contains(#""type":"person.recovery_key_set""#) && r.stdout.contains(#""trust":"first_use""#),
                "\(r.stderr)")
        r = try ledger("devices", "recovery-key", "show", "--person", "quinn", "--json")
        #expect(r.status == 0 && r.stdout.contains(#""trust":"first_use","trust_text":"first use, with her first keyed device""#),
                "\(r.stdout)")
        // While the phone works, the recovery key links nothing: the phone introduces.
        r = try link("laptop", "--recovered-by-key", store.path("rec.key"))
        #expect(r.status == 25 && r.stderr.contains("still has unrevoked keyed devices (phone)"), "\(r.stderr)")
        #expect(try ledger("devices", "revoke", "phone", "--reason", "lost").status == 0)
        r = try link("laptop")
        #expect(r.status == 25 && r.stderr.contains("--recovered-by-key"), "\(r.stderr)")
        r = try link("laptop", "--recovered-by-key", store.path("laptop.key"))
        #expect(r.status == 25, "another key is not her recovery key: \(r.stderr)")
        r = try link("laptop", "--recovered-by-key", store.path("rec.key"), "--json")
        #expect(r.status == 0 && r.stdout.contains(#""trust":"recovery""#) && r.stdout.contains(#""schema_version":3"#), "\(r.stderr)")
        // The recovered laptop replaces the recovery key; the old one no longer signs for it.
        r = try ledger("devices", "recovery-key", "set", "--person", "quinn", "--public-key", store.path("rec2.pub"),
                       "--key", store.path("rec.key"), "--signed-by", "laptop")
        #expect(r.status == 26, "signed with the wrong key for the laptop: \(r.stderr)")
        r = try ledger("devices", "recovery-key", "set", "--person", "quinn", "--public-key", store.path("rec2.pub"),
                       "--key", store.path("laptop.key"), "--signed-by", "laptop")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ledger("devices", "recovery-key", "show", "--person", "quinn", "--json")
        #expect(r.status == 0 && r.stdout.contains(#""trust":"device","signed_by":"laptop""#), "\(r.stdout)")
        #expect(try ledger("devices", "recovery-key", "set", "--person", "quinn", "--public-key", store.path("rec.pub"),
                           "--key", store.path("rec.key")).status == 26)
        r = try ledger("audit", "device", "laptop")
        #expect(r.status == 0 && r.stdout.contains("recovered with recovery key"), "\(r.stdout)")
        #expect(try ledger("verify", "--deep").status == 0)
        #expect(try ledger("audit", "replay").status == 0)
    }

    @Test func withoutARecoveryKeyTheRefusalSaysSo() throws {
        for name in ["phone", "laptop"] { #expect(try ledger("devices", "keygen", "--out", store.path(name)).status == 0) }
        #expect(try link("phone").status == 0)
        #expect(try ledger("devices", "recovery-key", "show", "--person", "quinn").stdout == "none\n")
        #expect(try ledger("devices", "revoke", "phone").status == 0)
        let r = try link("laptop")
        #expect(r.status == 25 && r.stderr.contains("registered no recovery key"), "\(r.stderr)")
        #expect(try ledger("devices", "link", "tablet", "--person", "quinn", "--label", "Tablet", "--platform", "web").status == 0)
    }
}
