import ActionLedger

/// Each step's proof level and key fingerprint beside audit entries, activity items and
/// show's trail, read from the log by seq (the projections keep no proofs).
enum ProofColumns {
    static let csvHeader = ["proof_level", "key_fingerprint"]

    static func csv(_ proof: ProofSummary?) -> [String] {
        [proof?.level.rawValue ?? "", proof?.keyFingerprint?.hex ?? ""]
    }

    /// ` [proof signed, key 1a2b…]`, or nothing for events no device made.
    static func human(_ proof: ProofSummary?) -> String {
        proof.map { " [proof \($0.text)]" } ?? ""
    }
}
