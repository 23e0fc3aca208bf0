import Foundation

/// Where the workloads keep their stores: `$BENCH_SCRATCH`, else
/// `/tmp/actionledger-bench` (on this machine the same ext4 disk as the repository, so
/// fsync is real). Cached 1M-event fixtures live in its `fixtures/` folder.
public enum Scratch {
    public static let root: String = ProcessInfo.processInfo.environment["BENCH_SCRATCH"] ?? "/tmp/actionledger-bench"

    /// A fresh, empty file path `name` in a new folder (removed first if it exists).
    public static func fresh(_ name: String) -> String {
        let dir = "\(root)/run/\(name)"
        try? FileManager.default.removeItem(atPath: dir)
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return "\(dir)/store"
    }

    public static func fixture(_ name: String) -> String {
        let dir = "\(root)/fixtures"
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return "\(dir)/\(name)"
    }

    public static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}

/// `n` long-lived threads that run one closure together on demand: concurrent callers
/// without paying thread start-up inside the measurement.
public final class Gang: @unchecked Sendable {
    // Safe: `work` is written before the `go` semaphores are signalled and read by the
    // threads only after waiting on them; `done` orders the reverse direction.
    public let size: Int
    private var work: (@Sendable (Int) -> Void)?
    private let go: [DispatchSemaphore]
    private let done = DispatchSemaphore(value: 0)
    private var stopping = false

    public init(_ size: Int) {
        self.size = size
        go = (0..<size).map { _ in DispatchSemaphore(value: 0) }
        for i in 0..<size {
            let t = Thread { [self] in
                while true {
                    go[i].wait()
                    if stopping { return }
                    work?(i)
                    done.signal()
                }
            }
            t.stackSize = 1 << 20
            t.start()
        }
    }

    /// Runs `body(i)` on every thread i and returns when all have finished.
    public func run(_ body: @escaping @Sendable (Int) -> Void) {
        work = body
        for g in go { g.signal() }
        for _ in 0..<size { done.wait() }
    }

    public func stop() {
        stopping = true
        for g in go { g.signal() }
    }
}
