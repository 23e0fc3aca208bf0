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
}
