import Foundation

/// Specs/openapi.yaml, served at `GET /openapi.yaml`.
///
/// Read from a file rather than compiled in (a 1,300-line literal would dwarf the code):
/// `$LEDGER_OPENAPI`, else `openapi.yaml` beside the executable (an install copies it
/// there), else the source tree's Specs/openapi.yaml (a development build).
enum OpenAPIDocument {
    static let candidates: [String] = {
        var paths: [String] = []
        if let env = ProcessInfo.processInfo.environment["LEDGER_OPENAPI"] { paths.append(env) }
        let exe = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        paths.append(exe.deletingLastPathComponent().appendingPathComponent("openapi.yaml").path)
        // Sources/ledger-cli/Server/OpenAPIDocument.swift → the repository's Specs/openapi.yaml.
        var repo = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { repo.deleteLastPathComponent() }
        paths.append(repo.appendingPathComponent("Specs/openapi.yaml").path)
        return paths
    }()

    /// The document's bytes, or nil when no copy is found.
    static func load() -> Data? {
        for path in candidates { if let data = FileManager.default.contents(atPath: path) { return data } }
        return nil
    }
}
