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

    @Option(help: "The organisation; omitted, the device takes its person's (a person belongs to one org).")
    var org: String?

    @OptionGroup var who: OperatorOptions

    func execute() throws {
        try CommandRunner.run(.linkDevice(device: device, person: person, org: org ?? "", label: label, platform: platform),
                              commandId: who.commandId, actor: who.actor, global: global)
    }
}
