import ActionLedger
import Foundation

/// A ledger of ~1M events with a realistic mix, built once through the engine (with the
/// documented ``Environment/Options/unsafeNoSync`` opt-in, set-up only) and cached in
/// `Scratch.root/fixtures`. Action i (of person i/10 mod 200, 12 s apart over ~60 days) is:
/// i%10 in 0…3 medium, reviewed then approved; 4…5 low and confident, auto-shipped;
/// 6…7 low, approved; 8 dismissed; 9 left pending.
public enum MillionFixture {
    public static let targetEvents = 1_000_000
    public static let people = 200
    /// Bump when the mix or the engine's format changes: the cache is rebuilt.
    public static let version = "v11"

    public enum Kind { case reviewedApproved, autoShipped, approved, dismissed, pending }

    public static func kind(_ i: Int) -> Kind {
        switch i % 10 {
        case 0...3: .reviewedApproved
        case 4, 5: .autoShipped
        case 6, 7: .approved
        case 8: .dismissed
        default: .pending
        }
    }

    public static func actionId(_ i: Int) -> String { Sample.actionId("act", i) }
    public static func at(_ i: Int) -> Timestamp { Timestamp(milliseconds: Sample.base.milliseconds + Int64(i) * 12_000) }

    /// The path of the cached fixture, building it first when missing.
    public static func path() throws -> String {
        let path = Scratch.fixture("million-\(version).lmdb")
        let done = path + ".done"
        if FileManager.default.fileExists(atPath: done) { return path }
        for p in [path, path + "-lock"] { try? FileManager.default.removeItem(atPath: p) }
        let started = Date()
        let l = try EngineSetup.ledger(at: path, people: people, unsafeNoSync: true)
        var i = 0
        var head = try l.read { try $0.head().seq }
        while head < UInt64(targetEvents) {
            var group: [CommandRequest] = []
            while group.count < 3000 {
                group += commands(i)
                i += 1
            }
            try EngineSetup.mustSucceed(l, group)
            head = try l.read { try $0.head().seq }
        }
        try l.environment.sync()
        try "\(head) events, \(i) actions\n".write(toFile: done, atomically: true, encoding: .utf8)
        FileHandle.standardError.write(Data("built \(path): \(head) events in \(Int(-started.timeIntervalSinceNow)) s\n".utf8))
        return path
    }

    /// The number of actions in the fixture (read from its marker).
    public static func actions() throws -> Int {
        let text = try String(contentsOfFile: try path() + ".done", encoding: .utf8)
        return Int(text.split(separator: " ")[2])!
    }

    /// The commands that create action `i`'s events.
    static func commands(_ i: Int) -> [CommandRequest] {
        // Person by blocks of ten, so every person gets every kind of action.
        let id = actionId(i), person = Sample.person(i / 10 % people), device = Sample.device(i / 10 % people), now = at(i)
        let k = kind(i)
        let stakes: Stakes = k == .reviewedApproved ? .medium : .low
        var out = [CommandRequest(.propose(Sample.proposal(id, person: person, stakes: stakes,
                                                           confidence: k == .autoShipped ? 0.95 : 0.5)), now: now)]
        switch k {
        case .reviewedApproved:
            out.append(CommandRequest(.tap(.review, actionId: id, device: device), now: now))
            out.append(CommandRequest(.tap(.approve, actionId: id, device: device), now: now))
        case .approved:
            out.append(CommandRequest(.tap(.approve, actionId: id, device: device), now: now))
        case .dismissed:
            out.append(CommandRequest(.dismiss(actionId: id, device: device, reason: "not today"), now: now))
        case .autoShipped, .pending:
            break
        }
        return out
    }
}
