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
        .executableTarget(
            name: "ledger-cli",
            dependencies: [
                "ActionLedger",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
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
            dependencies: ["ActionLedger", "CLMDB", "ledger-cli", "ledger-stress"],
            // Stores written by landed builds, for the migration tests (read from the source tree).
            exclude: ["Fixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
