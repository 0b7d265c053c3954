/// When a failed attempt is tried again, and after how long: exponential backoff with full
/// jitter (Alamofire's RetryPolicy, with 429 added and a larger cap). Pure; the random source
/// is passed in so tests are repeatable.
public struct RetryPolicy: Sendable {
    public var baseDelayMilliseconds: Int64 = 1000
    public var maxDelayMilliseconds: Int64 = 300_000
    public static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    public init() {}

    public func isRetryable(_ error: TransferError) -> Bool {
        switch error {
        case .network, .unreachable, .stalled, .fdShortage: true
        case .httpStatus(let status), .collection(_, let status): Self.retryableStatuses.contains(status)
        case .tls, .sourceChanged, .checksumMismatch, .diskFull, .io, .destinationExists, .insecureRedirect, .busy: false
        }
    }

    /// The wait before attempt `attempt + 1`, where `attempt` (1-based) just failed.
    public func delay(afterAttempt attempt: Int, random: (ClosedRange<Double>) -> Double) -> Int64 {
        let exponent = min(max(attempt - 1, 0), 20)
        let ceiling = min(Double(maxDelayMilliseconds), Double(baseDelayMilliseconds) * Double(1 << exponent))
        return max(100, Int64(random(0...ceiling)))
    }
}
