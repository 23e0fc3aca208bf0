import ArgumentParser

struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy", abstract: "Show or set the stakes policy (versions are events).",
        subcommands: [PolicyShow.self, PolicySet.self])
}
