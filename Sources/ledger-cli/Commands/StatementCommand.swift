import ActionLedger
import ArgumentParser
import Foundation

struct StatementCommand: LedgerSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "statement",
        abstract: "Print the exact bytes (hex) a device must sign for a step on an action (Specs/statements.md).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The action id.")
    var action: String

    @Option(help: "review, confirm, approve, dismiss, edit or hold.")
    var step: String

    @Option(help: "The device that signs.")
    var device: String

    @Option(name: .customLong("command-id"), help: "The command id the tap will carry (default: a new one, printed).")
    var commandId: String?

    @Option(help: "hold: ISO-8601 time it comes back.")
    var until: String?

    @Option(help: "edit: the new preview text.")
    var text: String?

    @Option(help: "dismiss: the reason (default: none, as `ledger dismiss` without --reason).")
    var reason: String?

    @Option(name: .customLong("claimed-at"), help: "The time the device claims (default: the engine clock).")
    var claimedAt: String?

    @Option(name: .customLong("content-hash"), help: "The content hash the device displays (default: the action's current one).")
    var contentHash: String?

    func execute() throws {
        guard let s = Statement.Step(rawValue: step) else {
            throw LedgerError(.invalidInput, "--step: expected review, confirm, approve, dismiss, edit or hold")
        }
        // A dismissal's reason is optional (statements.md §2: the empty string's hash), as
        // `ledger dismiss` and the HTTP statement route take it; the others' values are not.
        for (name, given, needed) in [("--until", until != nil, s == .hold), ("--text", text != nil, s == .edit)] where given != needed {
            throw LedgerError(.invalidInput, needed ? "step \(step) needs \(name)" : "\(name) does not go with step \(step)")
        }
        if reason != nil, s != .dismiss { throw LedgerError(.invalidInput, "--reason does not go with step \(step)") }
        let seen = try contentHash.map { h -> Digest in
            guard let d = Digest(hex: h) else { throw LedgerError(.invalidInput, "--content-hash: expected 64 hex digits", details: ["field": "content_hash"]) }
            return d
        }
        let command: Command
        switch s {
        case .review, .confirm, .approve:
            command = .tap(TapStep(rawValue: s.rawValue)!, actionId: action, device: device, seenContent: seen)
        case .dismiss: command = .dismiss(actionId: action, device: device, reason: reason ?? "")
        case .edit: command = .edit(actionId: action, device: device, text: text ?? "")
        case .hold: command = .hold(actionId: action, device: device, until: try Clock.parse(until ?? "", option: "--until"))
        }
        try CommandRunner.requireIdentifiers(command)
        let ledger = try global.open(write: false)
        let claimed = try claimedAt.map { try Clock.parse($0, option: "--claimed-at") } ?? (try global.now(ledger))
        let id = commandId ?? CommandRequest.newCommandId()
        try CommandRunner.requireIdentifier(id, option: "--command-id", field: "command_id")
        let statement = try ledger.statement(for: command, commandId: id, claimedAt: claimed, contentHash: seen)
        let bytes = statement.bytes
        let hex = Hex.encode(bytes)
        if global.json {
            var fields = JSONObject()
            fields["domain"] = .string(Statement.tapDomain)
            for line in statement.lines { fields[line.name] = .string(line.value) }
            Output.json(["statement_hex": .string(hex), "sha256": .string(bytes.withUnsafeBytes { Digest.sha256($0) }.hex),
                         "webauthn_challenge": .string(WebAuthnAssertion.challenge(for: bytes)), "fields": .object(fields)])
        } else {
            print(hex)
        }
    }
}
