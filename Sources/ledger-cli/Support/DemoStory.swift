import ActionLedger

/// Plays ``DemoDay`` against a ledger through the same commands the CLI runs, printing
/// each moment as a person would tell it.
struct DemoStory {
    let ledger: Ledger
    let start: Timestamp
    let quiet: Bool
    var summary = JSONObject()
    private var refusals = 0
    private var keys = DemoKeys()

    init(ledger: Ledger, start: Timestamp, quiet: Bool) {
        self.ledger = ledger
        self.start = start
        self.quiet = quiet
    }

    func time(_ minute: Int64) -> Timestamp { start.adding(milliseconds: minute * 60_000) }

    func say(_ text: String) { if !quiet { Human.line(text) } }

    func clock(_ t: Timestamp) -> String { String(t.iso8601.dropFirst(11).prefix(5)) }

    /// `command` at `minute`, signed when a keyed device makes it.
    func request(_ command: Command, at minute: Int64, actor: String = "operator") throws -> CommandRequest {
        let id = CommandRequest.newCommandId()
        return CommandRequest(command, commandId: id, now: time(minute), actor: actor,
                              proof: try keys.proof(command, commandId: id, at: time(minute), ledger: ledger))
    }

    @discardableResult
    mutating func run(_ command: Command, at minute: Int64, actor: String = "operator") throws -> CommandResult? {
        do {
            return try ledger.execute(try request(command, at: minute, actor: actor))
        } catch let e as LedgerError {
            refusals += 1
            say("   ✗ refused [\(e.code.rawValue)]: \(e.message)")
            return nil
        }
    }

    mutating func tap(_ step: TapStep, _ id: String, on device: String, at minute: Int64, verified: Bool = false) throws {
        guard try run(.tap(step, actionId: id, device: device, userVerified: verified), at: minute) != nil else { return }
        let label = device == "quinn-iphone" ? "📱 iPhone" : device == "quinn-laptop" ? "💻 laptop" : device
        say("   \(clock(time(minute))) \(label): \(step.rawValue) \(id)\(device == "quinn-iphone" ? " (signed; Face ID)" : "")")
    }

    /// Links the day's devices: the iPhone's key needs Face ID to sign (Secure Enclave), the
    /// laptop's and the iPad's are introduced by it; the studio tablet has no key.
    mutating func linkDevices() throws {
        for (device, label, platform, protection, introducer) in [
            ("quinn-iphone", "iPhone 16 · Quinn", Platform.ios, KeyProtection.userVerification, nil as String?),
            ("quinn-laptop", "Desktop · transquinnftw-MBP", .web, .device, "quinn-iphone"),
            ("old-ipad", "iPad (2019)", .ios, .device, "quinn-iphone"),
        ] {
            let key = try keys.key(for: device, platform, protection: protection, introducer: introducer, ledger: ledger)
            try run(.linkKeyedDevice(device: device, person: "quinn", org: "quinn-studio", label: label, platform: platform, key: key),
                    at: 0)
        }
        try run(.linkDevice(device: "studio-tablet", person: "quinn", org: "quinn-studio", label: "Studio tablet (shared)",
                            platform: .web), at: 0)
    }

    mutating func run() throws {
        say("☀️  Quinn's day — \(start.iso8601.prefix(10))")
        say("")
        try linkDevices()
        var policy = PolicyDocument(version: 1, proofs: .strict)
        policy.raise = [.init(kind: "send_dm", surface: "x", stakes: .medium)]
        try run(.setPolicy(policy, org: "quinn-studio"), at: 1)
        say("🔐 Linked iPhone (key behind Face ID), laptop and an old iPad (keys introduced by the iPhone) and an unkeyed")
        say("   studio tablet; policy v1 (strict): medium and high steps must be signed, the high approve proven by")
        say("   user verification; auto-ship low stakes at ≥ 0.8 confidence, X DMs raised to medium.")
        say("")

        say("🤖 Sasha (OnlyFans) and Mia (X) draft through the day:")
        var autoShipped: [String] = [], waiting: [String] = []
        for d in DemoDay.drafts {
            guard let r = try run(.propose(DemoDay.input(d)), at: d.minute, actor: d.specialist.name) else { continue }
            if r.action?.status == .autoShipped { autoShipped.append(d.id) } else { waiting.append(d.id) }
        }
        say("   \(DemoDay.drafts.count) proposals: \(autoShipped.count) low-stakes ones auto-shipped silently, "
            + "\(waiting.count) wait for Quinn.")
        say("")

        say("☕ Morning, on the phone and the laptop:")
        try tap(.review, "of-02", on: "quinn-iphone", at: 40)
        try tap(.approve, "of-02", on: "quinn-laptop", at: 44)
        say("   → medium stakes, two taps: reviewed on the phone, approved on the laptop.")
        try tap(.review, "of-03", on: "quinn-iphone", at: 70)
        try tap(.confirm, "of-03", on: "quinn-iphone", at: 71)
        try tap(.approve, "of-03", on: "quinn-laptop", at: 72)
        try tap(.approve, "of-03", on: "studio-tablet", at: 72, verified: true)
        try tap(.approve, "of-03", on: "quinn-iphone", at: 73)
        say("   → the $24.99 PPV is high stakes: three taps, and the approval must be proven by Face ID: the laptop's")
        say("     signature (no user verification; recorded as tap.refused) and the tablet's unsigned \"verified\" claim")
        say("     are refused; the iPhone's Face ID-bound signature approves it.")
        say("")

        say("✏️  An edit voids a review:")
        try tap(.review, "of-05", on: "quinn-iphone", at: 160)
        if try run(.edit(actionId: "of-05", device: "quinn-laptop", text: "Poll: Friday's live outfit — red, black or surprise?"),
                   at: 170) != nil {
            say("   \(clock(time(170))) 💻 laptop: edited the caption of of-05")
        }
        try tap(.approve, "of-05", on: "quinn-laptop", at: 171)
        try tap(.review, "of-05", on: "quinn-laptop", at: 172)
        try tap(.approve, "of-05", on: "quinn-laptop", at: 173)
        say("")

        say("🙅 A dismissal, a hold and a lost iPad:")
        if try run(.dismiss(actionId: "x-07", device: "quinn-iphone", reason: "handle it personally"), at: 200) != nil {
            say("   \(clock(time(200))) 📱 iPhone: dismissed x-07 (\"handle it personally\")")
        }
        if try run(.hold(actionId: "of-10", device: "quinn-iphone", until: time(24 * 60)), at: 210) != nil {
            say("   \(clock(time(210))) 📱 iPhone: held of-10 until tomorrow")
        }
        if try run(.revokeDevice(device: "old-ipad", reason: "left at the studio"), at: 230) != nil {
            say("   \(clock(time(230))) 🔐 revoked old-ipad (left at the studio)")
        }
        try tap(.approve, "x-04", on: "old-ipad", at: 240)
        say("   → the iPad's signature is valid but the device is revoked: refused, and recorded for the audit.")
        say("")

        say("⚡ Phone and laptop race to approve the same reply:")
        let race = try ledger.execute(group: [
            try request(.tap(.approve, actionId: "x-15", device: "quinn-iphone"), at: 300),
            try request(.tap(.approve, actionId: "x-15", device: "quinn-laptop"), at: 300),
        ])
        for r in race {
            switch r {
            case .success(let ok): say("   ✓ \(ok.action?.decision?.device ?? "?") won: x-15 approved")
            case .failure(let e): refusals += 1; say("   ✗ refused [\(e.code.rawValue)]: \(e.message)")
            }
        }
        say("")

        say("🚀 Shipping what was approved:")
        for id in ["of-02", "of-03", "of-05", "x-15"] {
            try run(.recordOutcome(actionId: id, succeeded: true, outcome: ["post_url": .string("https://example.test/\(id)")]),
                    at: 320, actor: "system:executor")
        }
        try run(.recordOutcome(actionId: autoShipped.first ?? "of-01", succeeded: false, outcome: ["error": "rate limited"]),
                at: 321, actor: "system:executor")
        say("   4 executed, 1 failed (rate limited) — every outcome names the device that approved it.")
        try summarize(autoShipped: autoShipped.count)
    }

    mutating func summarize(autoShipped: Int) throws {
        let (head, pending) = try ledger.read { r -> (LogHead, Int) in
            let ids = DemoDay.drafts.map(\.id)
            return (try r.head(), try ids.filter { try r.actionState($0)?.status == .pending }.count)
        }
        summary = ["proposals": .number(Double(DemoDay.drafts.count)), "auto_shipped": .number(Double(autoShipped)),
                   "still_pending": .number(Double(pending)), "refusals": .number(Double(refusals)),
                   "events": .number(Double(head.seq))]
        let end = time(450)  // evening: after the last draft of the day
        let feed = try ledger.query { try $0.today(TodayQuery(person: "quinn", now: end, limit: 5)) }
        summary["today_count"] = .number(Double(feed.count))
        say("")
        say("📋 Quinn's Today feed at \(clock(end)): \(feed.headline)")
        for item in feed.items {
            say("   [\(item.stakes.rawValue)] \(item.actionId) \(item.proposal.specialist.name): "
                + "\"\(item.proposal.preview.text)\" → next tap: \(item.nextTap.rawValue)")
        }
        if feed.count > feed.items.count { say("   … and \(feed.count - feed.items.count) more") }
        for d in feed.drafts { say("   \(d.specialist) drafted \(d.count)") }
        say("   Auto-shipped (last 24h): \(feed.autoShipped.count) — "
            + feed.autoShipped.byKind.map { "\($0.count) \($0.kind)" }.joined(separator: ", "))
        say("")
        let proofs = try ledger.proofReport(in: .all)
        summary["decisions_by_proof_level"] = .object(JSONObject(ProofLevel.allCases.map { ($0.rawValue, .number(Double(proofs.byLevel[$0] ?? 0))) }))
        say("🔏 Decisions by proof: " + ProofLevel.allCases.map { "\($0.rawValue) \(proofs.byLevel[$0] ?? 0)" }.joined(separator: ", ")
            + "; \(proofs.unproven.count) rest on assertions only (ledger audit proofs). The demo's device keys lived only in this run.")
        say("📒 \(head.seq) events recorded; \(pending) actions still pending (held ones included); \(refusals) taps refused by policy.")
        say("   Chain head \(head.hash.hex.prefix(16))…  Try: ledger show of-05, ledger audit action of-03, ledger verify")
    }
}
