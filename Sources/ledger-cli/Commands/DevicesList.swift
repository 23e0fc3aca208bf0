import ActionLedger
import ArgumentParser

struct DevicesList: LedgerSubcommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List every device ever linked.")

    @OptionGroup var global: GlobalOptions

    func execute() throws {
        let ledger = try global.open(write: false)
        let devices = try ledger.read { try $0.allDevices() }
        if global.json {
            Output.json(["devices": .array(devices.map { d in
                ["device": .string(d.device), "person": .string(d.person), "org": .string(d.org), "label": .string(d.label),
                 "platform": .string(d.platform.rawValue), "linked_at": .string(d.linkedAt.iso8601),
                 "revoked_at": d.revokedAt.map { .string($0.iso8601) } ?? .null]
            })])
            return
        }
        for d in devices {
            let status = d.revokedAt.map { "revoked \($0.iso8601)" } ?? "active"
            // The org too: a person id means nothing across orgs (policy.md `person.one_org`).
            Human.row([d.device, d.person, d.org, d.platform.rawValue, d.label, status])
        }
    }
}
