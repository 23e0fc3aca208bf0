import Foundation
import Testing
@testable import ActionLedger

@Suite struct CheckpointTests {
    let key = CheckpointSigningKey()
    let head = LogHead(seq: 42, hash: Digest(hex: String(repeating: "ab", count: 32))!)

    @Test func signedBytesAreExactlyTheDocumentedLines() throws {
        let cp = try Checkpoint(head: head, time: at("2026-11-22T09:15:00Z"), key: key)
        let expected = "actionledger-checkpoint-v1\n42\n\(String(repeating: "ab", count: 32))\n"
            + "2026-11-22T09:15:00.000Z\n\(key.publicKey.keyId)\n"
        #expect(cp.signedBytes == Array(expected.utf8))
        #expect(cp.signature.count == 64)
        #expect(key.publicKey.keyId.count == 16)
        #expect(key.publicKey.keyId == String(key.publicKey.rawBytes.withUnsafeBytes { Digest.sha256($0) }.hex.prefix(16)))
        try cp.verifySignature(with: key.publicKey)
    }

    @Test func aCheckpointAndKeysRoundTripThroughJSON() throws {
        let cp = try Checkpoint(head: head, time: t0, key: key)
        let parsed = try Checkpoint(json: try JSONParser.parse(cp.json.serialized()))
        #expect(parsed == cp)
        let pub = try CheckpointPublicKey(json: try JSONParser.parse(key.publicKey.json.serialized()))
        try parsed.verifySignature(with: pub)
        let priv = try CheckpointSigningKey(json: try JSONParser.parse(key.json.serialized()))
        #expect(priv.publicKey.keyId == key.publicKey.keyId)
    }

    @Test func forgedOrAlteredCheckpointsAreRefused() throws {
        let cp = try Checkpoint(head: head, time: t0, key: key)
        func code(_ c: Checkpoint, _ k: CheckpointPublicKey) -> JSON? {
            do { try c.verifySignature(with: k); return nil } catch let e as LedgerError { return e.details["problem"] } catch { return "?" }
        }
        var longer = cp
        longer.logSize = 43
        #expect(code(longer, key.publicKey) == "bad_signature")
        var otherHash = cp
        otherHash.headHash = .zero
        #expect(code(otherHash, key.publicKey) == "bad_signature")
        var later = cp
        later.time = t0.adding(milliseconds: 1)
        #expect(code(later, key.publicKey) == "bad_signature")
        // A forger with their own key: wrong key, and lying about the key id does not help.
        let forger = CheckpointSigningKey()
        var forged = try Checkpoint(head: LogHead(seq: 40, hash: .zero), time: t0, key: forger)
        #expect(code(forged, key.publicKey) == "wrong_key")
        forged.keyId = key.publicKey.keyId
        #expect(code(forged, key.publicKey) == "bad_signature")
        var flipped = cp
        flipped.signature[10] ^= 1
        #expect(code(flipped, key.publicKey) == "bad_signature")
    }

    @Test func malformedCheckpointAndKeyFilesNameTheField() throws {
        let good = try Checkpoint(head: head, time: t0, key: key).json
        func field(_ mutate: (inout JSONObject) -> Void) -> String? {
            guard case .object(var o) = good else { return nil }
            mutate(&o)
            do { _ = try Checkpoint(json: .object(o)); return nil } catch let e as LedgerError {
                #expect(e.code == .invalidInput)
                if case .string(let f)? = e.details["field"] { return f }
                return "?"
            } catch { return "?" }
        }
        #expect(field { $0["log_size"] = -1 } == "log_size")
        #expect(field { $0["log_size"] = "42" } == "log_size")
        #expect(field { $0["head_hash"] = .string(String(repeating: "AB", count: 32)) } == "head_hash")
        #expect(field { $0["signature"] = "00" } == "signature")
        #expect(field { $0["format"] = "v0" } == "format")
        #expect(field { $0["extra"] = 1 } == "extra")
        #expect(field { $0["time"] = nil } == "time")
        expectLedgerError(.invalidInput) { try CheckpointPublicKey(json: ["algorithm": "rsa", "key_id": "x", "public_key": "00"]) }
        var pub = key.publicKey.json
        if case .object(var o) = pub { o["key_id"] = "0000000000000000"; pub = .object(o) }
        expectLedgerError(.invalidInput) { try CheckpointPublicKey(json: pub) }
    }
}
