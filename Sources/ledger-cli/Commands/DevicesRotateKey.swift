import ActionLedger
import ArgumentParser

struct DevicesRotateKey: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Put a new P-256 key in force for a keyed device (device.key_rotated).",
        discussion: """
            The rotation is signed by an unrevoked keyed device of the same person: the device \
            itself with its current key (the default), or another named by --introduced-by. From \
            the rotation on, the device's signatures are checked against the new key; earlier ones \
            stay checked against the key in force at their seq.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device whose key changes.")
    var device: String

    @Option(name: .customLong("public-key"), help: "The new P-256 public key, SPKI DER or PEM (FILE).")
    var publicKey: String

    @Option(help: "The signing device's PEM private key: the device's current key, or --introduced-by's.")
    var key: String

    @Option(name: .customLong("introduced-by"), help: "Another keyed device of the person that signs the rotation (default: the device itself).")
    var introducedBy: String?

    @Option(name: .customLong("key-protection"), help: "none, device or user-verification (default: the current key's).")
    var keyProtection: KeyProtection?

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        try CommandRunner.requireIdentifier(device, option: "the device id", field: "device")
        try CommandRunner.requireIdentifier(introducedBy, option: "--introduced-by", field: "introduced_by")
        let ledger = try global.open(write: true)
        let signer = introducedBy ?? device
        // nil for an unknown or unkeyed device: rotationStatement names that refusal.
        let current = try ledger.deviceKey(device)
        var newKey = try DeviceKey(spki: try DeviceKey.readPublicKey(try Output.read(publicKey)),
                                   protection: keyProtection ?? current?.protection ?? .device, trust: .firstUse)
        let statement = try ledger.rotationStatement(device: device, key: newKey, signedBy: signer)
        let signed = try P256Signature.sign(statement, pemPrivateKey: String(decoding: try Output.read(key), as: UTF8.self))
        newKey.trust = .introducedBy(device: signer, signature: signed.signature)
        try CommandRunner.run(.rotateDeviceKey(device: device, key: newKey), commandId: who.commandId, actor: who.actor, global: global)
    }
}
