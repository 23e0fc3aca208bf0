import Foundation

/// Specs/openapi.yaml, served at `GET /openapi.yaml`.
///
/// Compiled in (OpenAPIDocument+Embedded.swift, written by Specs/tools/embed_openapi.py), so
/// the binary serves its own contract wherever it is installed; OpenAPIDocumentTests fails
/// while the embedded copy differs from Specs/openapi.yaml by a byte.
enum OpenAPIDocument {
    /// The document's bytes, decoded once.
    static let bytes: [UInt8] = {
        guard let data = Data(base64Encoded: base64Lines.joined()) else {
            preconditionFailure("OpenAPIDocument+Embedded.swift holds invalid base64: regenerate it with `make openapi`")
        }
        return Array(data)
    }()
}
