import Foundation

/// Standard base64 (RFC 4648 §4, padding required), as the proof file spells signatures.
enum Base64 {
    static func decode(_ s: String) -> [UInt8]? {
        guard let data = Foundation.Data(base64Encoded: s) else { return nil }
        return Array(data)
    }

    static func encode(_ bytes: [UInt8]) -> String { Foundation.Data(bytes).base64EncodedString() }
}

