import CLMDB
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// What a client is told of a failure below the engine's refusals: damage LMDB found is
/// `integrity_failure`, as the CLI says it (not a disk fault to retry), and a storage failure
/// names the store's files without the folder the server keeps them in.
@Suite struct ProblemMiddlewareTests {
    @Test func damageIsAnIntegrityFailureAndNoAnswerNamesTheStoresFolder() async throws {
        let store = "/srv/secret-place/ledger.lmdb"
        let router = Router(context: APIContext.self)
        router.add(middleware: ProblemMiddleware(store: store))
        router.get("/damaged") { _, _ -> String in throw LMDBError(code: MDB_CORRUPTED, operation: "mdb_get") }
        router.get("/replaced") { _, _ -> String in
            throw LedgerError(.storage, "\(store)-lock was removed, replaced or given another name; nothing was written")
        }
        router.get("/disk") { _, _ -> String in throw LMDBError(code: ENOSPC, operation: "mdb_txn_commit(\(store))") }
        try await Application(router: router).test(.router) { client in
            let damaged = try await client.execute(uri: "/damaged", method: .get)
            #expect(damaged.status == .internalServerError && damaged.code == "integrity_failure", "\(damaged.text)")
            #expect(damaged.text.contains("damaged_page") && damaged.text.contains("verify --deep"))
            let replaced = try await client.execute(uri: "/replaced", method: .get)
            #expect(replaced.code == "storage_error" && replaced.text.contains("ledger.lmdb-lock was removed"), "\(replaced.text)")
            let disk = try await client.execute(uri: "/disk", method: .get)
            #expect(disk.code == "storage_error" && disk.text.contains("No space left"), "\(disk.text)")
            for answer in [damaged, replaced, disk] { #expect(!answer.text.contains("secret-place"), "\(answer.text)") }
        }
    }
}
