// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "ActionLedger",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "ActionLedger", targets: ["ActionLedger"]),
        .executable(name: "ledger", targets: ["ledger-cli"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // `ledger serve` only (LedgerServer): the engine target never links these.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // Debian's liblmdb-dev, found through pkg-config; the shim header pulls in lmdb.h.
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .target(
            name: "ActionLedger",
            dependencies: [
                "CLMDB",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The HTTP API (`ledger serve`): a library so the tests drive it in-process. Its path sits
        // inside Sources/ledger-cli because the top-level layout is fixed.
        .target(
            name: "LedgerServer",
            dependencies: [
                "ActionLedger",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Sources/ledger-cli/Server",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "ledger-cli",
            dependencies: [
                "ActionLedger",
                "LedgerServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["Server"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Test and measurement workers (synthetic writes): built with the tests, not shipped in `ledger`.
        .executableTarget(
            name: "ledger-stress",
            dependencies: [
                "ActionLedger",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/LedgerStress",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "ActionLedgerTests",
            // ledger-cli, ledger-stress: process tests run the built binaries found beside the test bundle.
            dependencies: [
                "ActionLedger", "CLMDB", "ledger-cli", "ledger-stress", "LedgerServer",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            // Stores written by landed builds, for the migration tests (read from the source tree).
            exclude: ["Fixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
