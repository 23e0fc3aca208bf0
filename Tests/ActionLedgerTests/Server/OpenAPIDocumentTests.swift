import Foundation
import Testing
@testable import LedgerServer

/// The contract `ledger serve` compiles in is Specs/openapi.yaml, byte for byte.
@Suite struct OpenAPIDocumentTests {
    /// Specs/openapi.yaml, found from this file (Tests/ActionLedgerTests/Server/…).
    static let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Specs/openapi.yaml")

    @Test func theEmbeddedCopyIsSpecsOpenAPIByteForByte() throws {
        let file = Array(try Data(contentsOf: Self.spec))
        let embedded = OpenAPIDocument.bytes
        let firstDifference = zip(file, embedded).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? (file.count == embedded.count ? nil : min(file.count, embedded.count))
        #expect(firstDifference == nil, """
            OpenAPIDocument+Embedded.swift differs from Specs/openapi.yaml at byte \(firstDifference ?? 0) \
            (\(embedded.count) bytes embedded, \(file.count) in the file): run `make openapi`
            """)
        #expect(embedded.starts(with: Array("# Specs/openapi.yaml".utf8)))
    }

    /// A 405's `Allow` comes from ``RouteTable``: it must list every path and method of the
    /// contract, and nothing else (a route missing there answered a wrong method 404).
    @Test func theRouteTableIsTheContractsPathsAndMethods() throws {
        let text = String(decoding: try Data(contentsOf: Self.spec), as: UTF8.self)
        var contract: [String: [String]] = [:]
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let p = path, let m = ["get", "post", "put", "delete", "patch"].first(where: { line == "    \($0):" }) {
                contract[p, default: []].append(m.uppercased())
            } else if !line.hasPrefix(" "), !line.isEmpty {
                path = nil
            }
        }
        #expect(contract.count >= 30)
        for (p, methods) in contract {
            // A concrete path of the pattern: each {parameter} as a plain id.
            let concrete = p.replacing(/\{[^}]+\}/, with: "x1")
            let expected = methods.sorted { $0 == "GET" || $1 != "GET" }.joined(separator: ", ").replacingOccurrences(of: "GET", with: "GET, HEAD")
            #expect(RouteTable.methods(for: concrete) == expected, "\(p): the table says \(RouteTable.methods(for: concrete) ?? "nothing")")
        }
        #expect(RouteTable.routes.count == contract.count, "the table has \(RouteTable.routes.count) routes, the contract \(contract.count)")
    }
}
