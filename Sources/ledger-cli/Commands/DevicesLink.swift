import ActionLedger
import ArgumentParser

extension Platform: ExpressibleByArgument {}

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

    @Option(help: "The organisation.")
    var org = "default"

    @Option(help: "Who links it (recorded as the actor).")
    var actor = "operator"

    @Option(name: .customLong("command-id"), help: "Idempotency key.")
    var commandId: String?

    func execute() throws {
        let ledger = try global.open(write: true)
        let now = try global.now()
        let result = try ledger.execute(CommandRequest(
            .linkDevice(device: device, person: person, org: org, label: label, platform: platform),
            commandId: commandId, now: now, actor: actor))
        try ResultPrinter.print(result, ledger: ledger, now: now, json: global.json)
    }
}
