import ActionLedger
import Foundation

/// The content of `ledger demo`: a day of Quinn's, with Sasha drafting OnlyFans posts and
/// Mia drafting X replies. Deterministic text, stakes and confidence; times relative to
/// the day's start.
enum DemoDay {
    struct Draft {
        let id: String
        let specialist: Specialist
        let surface: String
        let kind: String
        let stakes: Stakes
        let confidence: Double
        let text: String
        let price: Double?
        let minute: Int64
    }

    static let sasha = Specialist(name: "Sasha", agent: "content-onlyfans")
    static let mia = Specialist(name: "Mia", agent: "engagement-x")

    static let posts: [(Stakes, Double, String, Double?)] = [
        (.low, 0.93, "Good morning loves ☀️ coffee & a new set dropping at noon", nil),
        (.medium, 0.74, "Behind the scenes from Tuesday's shoot — full gallery inside", nil),
        (.high, 0.88, "Exclusive PPV: the red-room set, 42 photos", 24.99),
        (.low, 0.86, "Thank you for 10k subscribers 💖", nil),
        (.medium, 0.67, "Poll: which outfit should I wear for Friday's live?", nil),
        (.low, 0.61, "Quick story: my cat knocked over the ring light again", nil),
        (.high, 0.9, "Bundle: 3 sets for the price of 2 this weekend only", 39.99),
        (.medium, 0.81, "Reposting fan-favourite from March with a new caption", nil),
        (.low, 0.95, "Live tonight at 9pm ET — set your reminders", nil),
        (.medium, 0.7, "Custom request slots open for December", nil),
        (.low, 0.84, "Rainy day mood 🌧️", nil),
        (.high, 0.77, "Locked message: unreleased beach set", 14.99),
        (.low, 0.82, "Sunday reset: new playlist, new photos", nil),
        (.medium, 0.79, "Collab teaser with @miaxo — dropping next week", nil),
    ]

    static let replies: [(String, Stakes, Double, String)] = [
        ("send_reply", .low, 0.92, "Thank you so much! 🥰"), ("send_reply", .low, 0.88, "Haha you get it"),
        ("send_reply", .low, 0.9, "Appreciate you ✨"), ("send_reply", .low, 0.57, "Maybe… you'll have to subscribe to find out"),
        ("send_dm", .low, 0.91, "Hey! Thanks for the tip, here's a little something"),
        ("send_reply", .low, 0.83, "Love this edit, reposting!"), ("send_reply", .medium, 0.72, "Not cool. Please don't share my content."),
        ("send_reply", .low, 0.96, "🔥🔥🔥"), ("send_reply", .low, 0.86, "See you at the live tonight!"),
        ("send_dm", .low, 0.65, "Hi! Custom slots open Monday, want me to hold one?"),
        ("send_reply", .low, 0.89, "Thank you babe"), ("send_reply", .low, 0.81, "Good morning to you too ☀️"),
        ("send_reply", .high, 0.8, "Responding to the press inquiry: happy to chat, email my team"),
        ("send_reply", .low, 0.93, "Yesss"), ("send_reply", .low, 0.78, "Which set was your favourite?"),
        ("send_reply", .low, 0.87, "💕"), ("send_dm", .medium, 0.74, "Re: collab — let's do it, details Monday"),
        ("send_reply", .low, 0.9, "Sending love back"), ("send_reply", .low, 0.85, "You're too sweet"),
        ("send_reply", .low, 0.6, "lol same"), ("send_reply", .low, 0.94, "Thank you for 10k!!"),
        ("send_reply", .low, 0.88, "Good luck with the exam!"), ("send_reply", .low, 0.82, "Tuesday, promise"),
        ("send_reply", .medium, 0.7, "We don't do meetups, sorry! Stay safe 💖"), ("send_reply", .low, 0.91, "Cutest comment today"),
        ("send_reply", .low, 0.84, "Happy Sunday!"),
    ]

    /// The day's 40 drafts, in the order they arrive: all in the morning's first half hour,
    /// before Quinn's first tap, since event times never go backwards along the log.
    static var drafts: [Draft] {
        var out: [Draft] = []
        for (i, p) in posts.enumerated() {
            out.append(Draft(id: "of-\(String(format: "%02d", i + 1))", specialist: sasha, surface: "onlyfans",
                             kind: "publish_post", stakes: p.0, confidence: p.1, text: p.2, price: p.3, minute: Int64(2 + i * 2)))
        }
        for (i, r) in replies.enumerated() {
            out.append(Draft(id: "x-\(String(format: "%02d", i + 1))", specialist: mia, surface: "x", kind: r.0,
                             stakes: r.1, confidence: r.2, text: r.3, price: nil, minute: Int64(3 + i)))
        }
        return out.sorted { $0.minute < $1.minute }
    }

    static func input(_ d: Draft) -> ProposalInput {
        ProposalInput(actionId: d.id, org: "quinn-studio", person: "quinn", proposal: Proposal(
            specialist: d.specialist, surface: d.surface, kind: d.kind,
            target: Target(type: d.surface == "x" ? "thread" : "feed", id: d.surface == "x" ? "x:thread-\(d.id)" : "of:quinn"),
            stakes: d.stakes, confidence: d.confidence,
            preview: Preview(text: d.text, assets: d.surface == "onlyfans" ? 1 + d.text.count % 5 : 0, price: d.price),
            rationale: d.surface == "x" ? "Reply while the thread is active" : "Subscribers are most active in this hour"))
    }
}
