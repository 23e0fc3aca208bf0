// swift-tools-version: 6.1
// The benchmark suite: a package of its own so `swift test` at the root never builds it.
// Run with `make bench` (see README.md).
import PackageDescription
import struct Foundation.URL

// SwiftPM names a path dependency after its folder (the clone's name), so look it up.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let engine: Target.Dependency = .product(name: "ActionLedger", package: root.lastPathComponent)

let benchmarkPlugin: [Target.PluginUsage] = [.plugin(name: "BenchmarkPlugin", package: "benchmark")]

let package = Package(
    name: "ActionLedgerBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // The device keys of the signed-approval workloads (the engine's own dependency).
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // The system's SQLite for the baseline (Debian: libsqlite3-dev).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // liblmdb for the raw LMDB baseline; named apart from the engine's CLMDB module.
        .systemLibrary(name: "BenchLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        // glibc's malloc.h, for the heap probe of the streaming workloads.
        .systemLibrary(name: "CMallocInfo"),
        // The baselines: raw LMDB and SQLite logs, and the cheapest shape's floor; no engine code.
        .target(name: "Baselines", dependencies: ["CSQLite", "BenchLMDB", .product(name: "Crypto", package: "swift-crypto")],
                swiftSettings: [.swiftLanguageMode(.v6)]),
        // Fixtures and workload helpers over the engine.
        .target(name: "BenchSupport",
                dependencies: [engine, "Baselines", "CMallocInfo", .product(name: "Crypto", package: "swift-crypto")],
                swiftSettings: [.swiftLanguageMode(.v6)]),
        // Turns the benchmark export into the ratio table and results/latest.json.
        .executableTarget(name: "bench-report", swiftSettings: [.swiftLanguageMode(.v6)]),
        // One workload in a plain process, for valgrind/perf.
        .executableTarget(name: "bench-profile", dependencies: ["BenchSupport", "Baselines", "BenchLMDB", engine],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(
            name: "Durable",
            dependencies: [.product(name: "Benchmark", package: "benchmark"), "BenchSupport", "Baselines",
                           engine],
            path: "Benchmarks/Durable",
            plugins: benchmarkPlugin
        ),
        .executableTarget(
            name: "AtScale",
            dependencies: [.product(name: "Benchmark", package: "benchmark"), "BenchSupport", "Baselines",
                           engine],
            path: "Benchmarks/AtScale",
            plugins: benchmarkPlugin
        ),
    ]
)
