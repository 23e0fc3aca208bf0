import ActionLedger
import Benchmark
import BenchSupport
import Foundation

/// A read-only ledger on the fixture, its projections caught up first (a writable open
/// does that once), and the fixture's last moment as "now".
func openFixtureForQueries() throws -> (Ledger, Timestamp) {
    let path = try MillionFixture.path()
    do { _ = try EngineSetup.ledger(at: path) }
    let now = MillionFixture.at(try MillionFixture.actions())
    return (try Ledger(path: path, options: Ledger.Options(readOnly: true)), now)
}

/// Today's first page (20 items) for each of the 200 creators in turn, and the auto-ship
/// report for the last 24 h of the log, through the projections.
func projectionQueries() {
    let state = Box<(Ledger, Timestamp, Int)>()
    Benchmark("query today-first-page engine 1M") { _ in
        let (l, now, next) = state.get
        state.value = (l, now, next + 1)
        let feed = try l.query { try $0.today(TodayQuery(person: Sample.person(next % MillionFixture.people), now: now)) }
        precondition(!feed.items.isEmpty, "empty Today feed")
        blackHole(feed)
    } setup: {
        let (l, now) = try openFixtureForQueries()
        state.value = (l, now, 0)
    } teardown: {
        state.value = nil
    }

    guard ProcessInfo.processInfo.environment["BENCH_ALL"] == "1" else { return }
    Benchmark("query autoshipped-24h engine 1M") { _ in
        let (l, now, _) = state.get
        let report = try l.query { try $0.autoShipped(in: .last(86_400_000, before: now)) }
        precondition(report.count > 0, "no auto-ships in the fixture's last 24 h")
        blackHole(report)
    } setup: {
        let (l, now) = try openFixtureForQueries()
        state.value = (l, now, 0)
    } teardown: {
        state.value = nil
    }
}
