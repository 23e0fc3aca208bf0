import ArgumentParser

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Link, revoke and list the devices people approve from.",
        subcommands: [DevicesLink.self, DevicesRevoke.self, DevicesList.self, DevicesKeygen.self, DevicesRotateKey.self,
                      DevicesRecoveryKey.self])
}
