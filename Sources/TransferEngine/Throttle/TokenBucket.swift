/// A token bucket in bytes, pure: the time is passed in (milliseconds on any monotonic clock),
/// so tests drive it with a fake clock. Tokens may go negative: a transfer that took a whole
/// network chunk owes it, and waits until the debt is repaid. The burst after idling is
/// bounded by `capacity`.
public struct TokenBucket: Equatable, Sendable {
    /// Bytes per second; nil means unlimited (so does 0 or less: nothing would ever repay a debt).
    public private(set) var rate: Int64?
    public private(set) var tokens: Double
    private var last: Int64?

    /// The most a bucket holds: `burstMilliseconds` of its rate (at least 16 KiB).
    public static let burstMilliseconds: Int64 = 100

    public init(rate: Int64?) {
        self.rate = Self.limiting(rate)
        tokens = 0
    }

    public var isLimited: Bool { rate != nil }

    public var capacity: Double {
        guard let rate else { return .infinity }
        // Saturating: rate × milliseconds overflows Int64 for rates past 92 PB/s.
        return Double(max(16 * 1024, rate.saturatingMultiply(Self.burstMilliseconds) / 1000))
    }

    /// Changes the rate, keeping at most the new capacity (a debt is kept).
    public mutating func setRate(_ newRate: Int64?, now: Int64) {
        refill(now: now)
        rate = Self.limiting(newRate)
        tokens = rate == nil ? 0 : min(tokens, capacity)
    }

    private static func limiting(_ rate: Int64?) -> Int64? {
        rate.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Adds what the time since the last call earned.
    public mutating func refill(now: Int64) {
        defer { last = now }
        guard let rate, let last, now > last else { return }
        tokens = min(capacity, tokens + Double(rate) * (Double(now) - Double(last)) / 1000)
    }

    /// True when a transfer may move bytes now (no debt).
    public mutating func allows(now: Int64) -> Bool {
        refill(now: now)
        return rate == nil || tokens >= 0
    }

    /// Records `bytes` moved (possibly into debt).
    public mutating func take(_ bytes: Int, now: Int64) {
        refill(now: now)
        guard rate != nil else { return }
        tokens -= Double(bytes)
    }

    /// Milliseconds until the debt is repaid (0 when there is none).
    public mutating func wait(now: Int64) -> Int64 {
        refill(now: now)
        guard let rate, rate > 0, tokens < 0 else { return 0 }
        return Int64(saturating: (-tokens * 1000 / Double(rate)).rounded(.up))
    }
}
