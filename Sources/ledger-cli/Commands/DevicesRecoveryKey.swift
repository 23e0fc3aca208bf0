import ActionLedger
import ArgumentParser

struct DevicesRecoveryKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery-key",
        abstract: "Show or set a person's recovery key: the offline key that can link her a keyed device once all are revoked.",
        subcommands: [DevicesRecoveryKeySet.self, DevicesRecoveryKeyShow.self])
}

struct DevicesRecoveryKeySet: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Put a recovery key in force for a person (person.recovery_key_set).",
        discussion: """
            The registration is signed by her recovery key in force (the default: --key is that \
            key's PEM private key), or by one of her unrevoked keyed devices named by --signed-by \
            (--key is then that device's key). Her first recovery key can also come with her first \
            keyed device: devices link … --recovery-key FILE. Make the key with devices keygen and \
            keep the private half offline.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The person whose recovery key it is.")
    var person: String

    @Option(name: .customLong("public-key"), help: "The new recovery key's P-256 public key, SPKI DER or PEM (FILE).")
    var publicKey: String

    @Option(help: "The signer's PEM private key: her recovery key in force, or --signed-by's key.")
    var key: String

    @Option(name: .customLong("signed-by"), help: "One of her unrevoked keyed devices that signs instead of the recovery key in force.")
    var signedBy: String?

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        try CommandRunner.requireIdentifier(person, option: "--person", field: "person")
        let ledger = try global.open(write: true)
        let recovery = try RecoveryKey(spki: try DeviceKey.readPublicKey(try Output.read(publicKey)))
        let statement = try ledger.recoveryKeyStatement(person: person, key: recovery,
                                                        signedBy: signedBy.map { "device:" + $0 } ?? "recovery_key")
        let signature = try P256Signature.sign(statement, pemPrivateKey: String(decoding: try Output.read(key), as: UTF8.self)).signature
        let trust: RecoveryTrust = signedBy.map { .device($0, signature: signature) } ?? .recoveryKey(signature: signature)
        try CommandRunner.run(.setRecoveryKey(person: person, key: recovery, trust: trust), commandId: who.commandId,
                              actor: who.actor, global: global)
    }
}

struct DevicesRecoveryKeyShow: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print a person's recovery key in force (null when she has none).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "The person.")
    var person: String

    func execute() throws {
        try CommandRunner.requireIdentifier(person, option: "--person", field: "person")
        let r = try global.open(write: false).recoveryKey(person: person)
        guard let r else { return global.json ? Output.json(.null) : print("none") }
        var json: JSONObject = ["person": .string(person), "org": .string(r.org), "fingerprint": .string(r.set.key.fingerprint.hex),
                                "set_seq": .number(Double(r.seq))]
        // As the event names it (events.md), for a program; the sentence beside it for a person.
        switch r.set.trust {
        case .firstUse: json["trust"] = "first_use"
        case .device(let device, _): json["trust"] = "device"; json["signed_by"] = .string(device)
        case .recoveryKey: json["trust"] = "recovery_key"
        }
        json["trust_text"] = .string(r.set.trustText)
        if global.json { Output.json(.object(json)) } else { Human.line("\(r.set.key.fingerprint.hex) (seq \(r.seq), \(r.set.trustText))") }
    }
}
