import ActionLedger
import Foundation

/// Builds engine stores for the workloads. Set-up may use ``Environment/Options/unsafeNoSync``;
/// the stores the measured durable paths write to are always opened durable.
public enum EngineSetup {
    /// A durable ledger at `path` with one linked device per person `0..<people`.
    public static func ledger(at path: String, people: Int = 1, unsafeNoSync: Bool = false) throws -> Ledger {
        var options = Ledger.Options()
        options.environment.unsafeNoSync = unsafeNoSync
        options.environment.mapSize = 1 << 30
        // BENCH_MAX_LAG: experiments with the projections' fold interval (default: the engine's).
        if let lag = ProcessInfo.processInfo.environment["BENCH_MAX_LAG"].flatMap(UInt64.init) {
            options.projections = ProjectionRegistry(ProjectionRegistry.standard.projections, maxLag: lag)
        }
        let l = try Ledger(path: path, options: options)
        if try l.read({ try $0.head().seq }) == 0 {
            _ = try l.execute(batch: (0..<people).map { n in
                CommandRequest(.linkDevice(device: Sample.device(n), person: Sample.person(n), org: Sample.org,
                                           label: "phone", platform: .ios), now: Sample.base)
            })
        }
        return l
    }

    /// Proposes `count` pending low-stakes actions `prefix-…` for person 0, in groups of 1000.
    public static func proposePending(_ l: Ledger, prefix: String, count: Int, person: Int = 0,
                                      stakes: Stakes = .low) throws {
        var i = 0
        while i < count {
            let n = min(1000, count - i)
            _ = try l.execute(batch: (i..<i + n).map {
                CommandRequest(.propose(Sample.proposal(Sample.actionId(prefix, $0), person: Sample.person(person), stakes: stakes)),
                               now: Sample.base)
            })
            i += n
        }
    }

    /// Runs `requests` as one group and stops the run if any was refused: a workload
    /// whose commands fail would measure the wrong thing.
    public static func mustSucceed(_ l: Ledger, _ requests: [CommandRequest]) throws {
        for (i, r) in try l.execute(group: requests).enumerated() {
            if case .failure(let e) = r { fatalError("workload command \(i) refused: \(e.code) \(e.message)") }
        }
    }

    /// One durable approval of `id` by the fixture's first device; a refusal or an approval
    /// that appended nothing stops the benchmark (its figures would be meaningless).
    public static func approve(_ l: Ledger, _ id: String) {
        do {
            let r = try l.execute(CommandRequest(.tap(.approve, actionId: id, device: Sample.device(0)), now: Sample.base))
            precondition(r.events.count == 1, "approval of \(id) appended nothing")
        } catch {
            fatalError("approval of \(id) failed: \(error)")
        }
    }
}
