import ActionLedger
import ArgumentParser
import Foundation

@main
struct LedgerCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "ActionLedger: an append-only, tamper-evident approval and audit log on LMDB.",
        discussion: "Every write is one durable LMDB transaction. See Specs/cli.md for every command, its JSON and exit codes.",
        subcommands: [
            // Core (issue 2)
            Propose.self, Review.self, Confirm.self, Approve.self, Dismiss.self, Edit.self, Hold.self,
            Init.self, Execute.self, Expire.self, Devices.self, PolicyCommand.self, Show.self, Log.self, Demo.self,
            // Projections and queries (issue 3)
            Today.self, Audit.self, Activity.self, Rebuild.self, Projections.self, Migrate.self,
            // Integrity and operations (issue 4)
            Verify.self, Keygen.self, CheckpointCommand.self, Backup.self, Export.self, Import.self,
            // Device keys (issue 13)
            StatementCommand.self, RelyingPartyCommand.self,
            // The HTTP API (issue 14)
            Serve.self, Tokens.self,
        ]
    )

    /// Secures the standard descriptors before anything is opened (``StandardStreams``).
    static func main() async {
        StandardStreams.secure()
        // A closed pipe (`ledger log | head -1`) is a failed write the command reports
        // (storage_error, field stdout), not a death by SIGPIPE that says nothing.
        signal(SIGPIPE, SIG_IGN)
        let arguments = CommandLine.arguments, environment = ProcessInfo.processInfo.environment
        FaultReport.install(arguments: arguments, environment: environment)
        // Before ArgumentParser runs: its help and usage errors are printed too, and must
        // not land in the store or its lock file any more than a command's answer may.
        let (store, json) = Arguments.store(arguments, environment)
        do {
            try StandardStreams.requireApart(from: store)
            // Every command's, `serve`'s included: which of two values counted would be ArgumentParser's choice.
            try Arguments.refuseRepeated(arguments)
        } catch let error as LedgerError {
            Self.exit(withError: Output.fail(error, json: json))
        } catch {}
        do {
            var command = try parseAsRoot(nil)
            if var async = command as? AsyncParsableCommand { try await async.run() } else { try command.run() }
        } catch {
            // Help and the like (exit 0): printed here, so that output lost (a full disk) is a
            // failure, as for every command's answer, not ArgumentParser's silent success.
            if exitCode(for: error) == .success, !(error is ExitCode) {
                print(fullMessage(for: error))
                do { try StandardStreams.flush() } catch let e as LedgerError { Self.exit(withError: Output.fail(e, json: json)) } catch {}
                Self.exit()
            }
            Self.exit(withError: error)
        }
    }
}
