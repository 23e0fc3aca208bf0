import ActionLedger
import BenchSupport
import Foundation

// A plain driver to run one workload under a profiler (valgrind --tool=callgrind):
//   bench-profile ingest <events>     proposals through the engine, 1000 per group
//   bench-profile approve <count>     single approvals, one command per transaction
//   bench-profile fixture             builds the cached 1M-event fixture (make bench would)
// Set-up and the measured part both use unsafeNoSync: this is for CPU profiles only.

let args = CommandLine.arguments
let workload = args.count > 1 ? args[1] : "ingest"
let count = args.count > 2 ? Int(args[2])! : 20_000
let path = Scratch.fresh("profile-\(workload)")
let l = try EngineSetup.ledger(at: path, unsafeNoSync: true)
let started = Date()
switch workload {
case "ingest":
    var i = 0
    while i < count {
        let n = min(1000, count - i)
        try EngineSetup.mustSucceed(l, (i..<i + n).map {
            CommandRequest(.propose(Sample.proposal(Sample.actionId("in", $0), person: Sample.person(0))), now: Sample.base)
        })
        i += n
    }
case "approve":
    try EngineSetup.proposePending(l, prefix: "p", count: count)
    for i in 0..<count {
        try l.execute(CommandRequest(.tap(.approve, actionId: Sample.actionId("p", i), device: Sample.device(0)), now: Sample.base))
    }
case "fixture":
    print(try MillionFixture.path())
default:
    fatalError("unknown workload \(workload)")
}
print("\(workload) \(count): \(String(format: "%.3f", -started.timeIntervalSinceNow)) s")
