import ActionLedger
import ArgumentParser

extension Platform: ExpressibleByArgument {}
extension KeyProtection: ExpressibleByArgument {}

struct DevicesLink: LedgerSubcommand {
    static let configuration = CommandConfiguration(commandName: "link", abstract: "Link a device to a person.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device id.")
    var device: String

    @Option(help: "The person who owns it.")
    var person: String

    @Option(help: "A label people recognise, e.g. \"Desktop · transquinnftw-MBP\".")
    var label: String

    @Option(help: "ios, web or cli.")
    var platform: Platform

    @Option(help: "The organisation; omitted, the device takes its person's (a person belongs to one org).")
    var org: String?

    @Option(name: .customLong("public-key"), help: "The device's P-256 public key, SPKI DER or PEM (FILE).")
    var publicKey: String?

    @Option(name: .customLong("key-protection"), help: "none, device or user-verification (not for cli devices).")
    var keyProtection: KeyProtection?

    @Option(name: .customLong("introduced-by"), help: "The person's keyed device vouching for the new key (needed after her first).")
    var introducedBy: String?

    @Option(help: "The introducing device's PEM private key, to sign the link statement.")
    var key: String?

    @Option(name: .customLong("recovery-key"),
            help: "With the person's first keyed device: her recovery public key (SPKI DER or PEM FILE), registered in the same command.")
    var recoveryKey: String?

    @Option(name: .customLong("recovered-by-key"),
            help: "Her recovery PEM private key, signing the recovery link statement (once every keyed device of hers is revoked).")
    var recoveredByKey: String?

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        guard let publicKey else {
            if keyProtection != nil || introducedBy != nil || key != nil || recoveryKey != nil || recoveredByKey != nil {
                throw LedgerError(.invalidInput, "--key-protection, --introduced-by, --key, --recovery-key and --recovered-by-key go with --public-key")
            }
            return try CommandRunner.run(.linkDevice(device: device, person: person, org: org ?? "", label: label,
                                                     platform: platform),
                                         commandId: who.commandId, actor: who.actor, global: global)
        }
        guard let keyProtection else { throw LedgerError(.invalidInput, "--public-key needs --key-protection") }
        guard (introducedBy == nil) == (key == nil) else {
            throw LedgerError(.invalidInput, "--introduced-by and --key go together (the introducer signs the link)")
        }
        guard introducedBy == nil || recoveredByKey == nil else {
            throw LedgerError(.invalidInput, "a key is introduced by a device (--introduced-by) or recovered (--recovered-by-key), not both")
        }
        let spki = try DeviceKey.readPublicKey(try Output.read(publicKey))
        var linkKey = try DeviceKey(spki: spki, protection: keyProtection, trust: .firstUse)
        if let introducedBy, let key {
            let statement = Statement.link(storeId: try storeId(), org: try linkOrg(), person: person, device: device,
                                           platform: platform, key: linkKey, introducedBy: introducedBy)
            let signed = try P256Signature.sign(statement, pemPrivateKey: String(decoding: try Output.read(key), as: UTF8.self))
            linkKey.trust = .introducedBy(device: introducedBy, signature: signed.signature)
        }
        if let recoveredByKey {
            let pem = String(decoding: try Output.read(recoveredByKey), as: UTF8.self)
            let recovery = try RecoveryKey(spki: try P256Signature.publicKey(pemPrivateKey: pem))
            let statement = Statement.recoveryLink(storeId: try storeId(), org: try linkOrg(), person: person, device: device,
                                                   platform: platform, key: linkKey, recoveryKey: recovery.fingerprint)
            linkKey.trust = .recovery(key: recovery.fingerprint, signature: try P256Signature.sign(statement, pemPrivateKey: pem).signature)
        }
        let recovery = try recoveryKey.map { try RecoveryKey(spki: try DeviceKey.readPublicKey(try Output.read($0))) }
        try CommandRunner.run(.linkKeyedDevice(device: device, person: person, org: org ?? "", label: label, platform: platform,
                                               key: linkKey, recoveryKey: recovery),
                              commandId: who.commandId, actor: who.actor, global: global)
    }

    private func storeId() throws -> Digest {
        guard let id = try global.open(write: false).read({ try $0.storeId() }) else {
            throw LedgerError(.introductionRequired, "an empty store has no devices to vouch for \(device)'s key")
        }
        return id
    }

    /// The org the link statement names: the given one, else the person's.
    private func linkOrg() throws -> String {
        guard let o = try org ?? global.open(write: false).read({ try $0.personOrg(person) }) else {
            throw LedgerError(.introductionRequired, "person \(person) has no keyed device to vouch for \(device)'s key")
        }
        return o
    }
}
