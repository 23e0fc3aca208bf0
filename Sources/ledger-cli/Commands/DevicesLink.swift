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

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        guard let publicKey else {
            if keyProtection != nil || introducedBy != nil || key != nil {
                throw LedgerError(.invalidInput, "--key-protection, --introduced-by and --key go with --public-key")
            }
            return try CommandRunner.run(.linkDevice(device: device, person: person, org: org ?? "", label: label,
                                                     platform: platform),
                                         commandId: who.commandId, actor: who.actor, global: global)
        }
        guard let keyProtection else { throw LedgerError(.invalidInput, "--public-key needs --key-protection") }
        guard (introducedBy == nil) == (key == nil) else {
            throw LedgerError(.invalidInput, "--introduced-by and --key go together (the introducer signs the link)")
        }
        let spki = try DeviceKey.readPublicKey(try Output.read(publicKey))
        var linkKey = try DeviceKey(spki: spki, protection: keyProtection, trust: .firstUse)
        if let introducedBy, let key {
            let ledger = try global.open(write: true)
            // The link statement names the org: the given one, else the person's.
            let boundOrg = try ledger.read { try $0.personOrg(person) }
            guard let storeId = try ledger.read({ try $0.storeId() }), let linkOrg = org ?? boundOrg else {
                throw LedgerError(.introductionRequired, "\(introducedBy) cannot introduce a device here: no such keyed device of \(person)")
            }
            let statement = Statement.link(storeId: storeId, org: linkOrg, person: person, device: device, platform: platform,
                                           key: linkKey, introducedBy: introducedBy)
            let signed = try P256Signature.sign(statement, pemPrivateKey: String(decoding: try Output.read(key), as: UTF8.self))
            linkKey.trust = .introducedBy(device: introducedBy, signature: signed.signature)
        }
        try CommandRunner.run(.linkKeyedDevice(device: device, person: person, org: org ?? "", label: label, platform: platform,
                                               key: linkKey),
                              commandId: who.commandId, actor: who.actor, global: global)
    }
}
