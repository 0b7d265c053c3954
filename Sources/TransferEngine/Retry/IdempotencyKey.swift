import FoundationEssentials

/// The `Idempotency-Key` request header of the IETF httpapi draft: one random key per job
/// whose method is not idempotent, drawn when the job is queued (so before its first attempt)
/// and stored with it, so that every attempt, a `retry` and an attempt after a restart carry
/// the same key and the server can recognise a repetition. Pure but for the random key.
public enum IdempotencyKey {
    public static let name = "Idempotency-Key"

    /// A new key for a job sending `method`, or nil: the method is idempotent, or the user gave
    /// the header (theirs is sent as it is).
    static func make(method: String?, headers: [String]) -> String? {
        guard let method, RetryPolicy.unsafeMethods.contains(method.uppercased()) else { return nil }
        let own = headers.contains { header in
            header.split(separator: ":", maxSplits: 1).first?.lowercased() == name.lowercased()
        }
        return own ? nil : UUID().uuidString.lowercased()
    }

    /// The header line; the draft defines the value as a Structured Field string (quoted).
    public static func header(_ key: String) -> String { "\(name): \"\(key)\"" }
}
