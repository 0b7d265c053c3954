/// When a failed attempt is tried again, and after how long: exponential backoff with full
/// jitter (Alamofire's RetryPolicy, with 429 added and a larger cap). A request that is not
/// idempotent (POST, PATCH) is tried again only when the server cannot have acted on it.
/// Pure; the random source is passed in so tests are repeatable.
public struct RetryPolicy: Sendable {
    public var baseDelayMilliseconds: Int64 = 1000
    public var maxDelayMilliseconds: Int64 = 300_000
    public static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// Statuses that say the server did not act on the request: retried whatever the method.
    public static let notActedStatuses: Set<Int> = [408, 429, 503]
    /// Methods whose repetition may repeat their effect (RFC 9110, 9.2.2).
    public static let unsafeMethods: Set<String> = ["POST", "PATCH"]

    public init() {}

    public func isRetryable(_ error: TransferError) -> Bool {
        switch error {
        case .network, .unreachable, .stalled, .tooSlow, .fdShortage, .protocolViolation: true
        case .httpStatus(let status), .collection(_, let status): Self.retryableStatuses.contains(status)
        case .s3(let failure): failure.isRetried
        case .tls, .sourceChanged, .checksumMismatch, .diskFull, .io, .destinationExists, .insecureRedirect, .request,
             .local, .busy, .notRegularFile, .tooLarge, .timedOut, .auth, .credentials, .unusableAnswer, .serverLimit: false
        }
    }

    /// Why an attempt of `method` that failed with `error` must not be tried again, or nil when
    /// it may be. `requestSent`: the request went out whole (headers and every body byte), so
    /// the server may have acted on it even if no answer came back. `retryUnsafe`: the user
    /// allowed retries of such requests anyway.
    public func refusal(for error: TransferError, method: String, requestSent: Bool,
                        retryUnsafe: Bool) -> RetryRefusal? {
        guard isRetryable(error) else {
            if case .timedOut = error { return .maxTime }
            return .permanent
        }
        guard Self.unsafeMethods.contains(method.uppercased()), !retryUnsafe else { return nil }
        let mayHaveActed = switch error {
        case .unreachable: false
        case .httpStatus(let status): !Self.notActedStatuses.contains(status)
        case .s3(let failure): !Self.notActedStatuses.contains(failure.status)
        default: requestSent
        }
        return mayHaveActed ? .unsafeMethod : nil
    }

    /// The wait before attempt `attempt + 1`, where `attempt` (1-based) just failed.
    public func delay(afterAttempt attempt: Int, random: (ClosedRange<Double>) -> Double) -> Int64 {
        let exponent = min(max(attempt, 1), 21) - 1  // (not `attempt - 1`: that traps at Int.min)
        let ceiling = min(Double(maxDelayMilliseconds), Double(baseDelayMilliseconds) * Double(1 << exponent))
        return max(100, Int64(random(0...ceiling)))
    }
}

/// Why a failed attempt was not tried again: stored with the attempt, shown by `show`.
/// The raw values are stable words.
public enum RetryRefusal: String, Codable, Equatable, Sendable {
    /// The error is never retried (HTTP 404, TLS, a malformed URL, a local failure, ...).
    case permanent
    /// A POST (or PATCH) the server may already have acted on: its whole request was sent and
    /// no answer, or a 500/502/504, came back. `--retry-unsafe` allows retrying it.
    case unsafeMethod = "unsafe_method"
    /// The job moved no byte for the no-progress timeout.
    case noProgress = "no_progress"
    /// Every attempt the job's `--retry` allows was used.
    case noRetriesLeft = "no_retries_left"
    /// The daemon was stopping.
    case stopping
    /// The attempt ran out of the job's `--max-time`: a limit the user set, not a fault.
    case maxTime = "max_time"

    /// One line for `show`.
    public var message: String {
        switch self {
        case .permanent: "the error is permanent"
        case .unsafeMethod:
            "the server may have acted on the request (not idempotent; queue it with --retry-unsafe to retry anyway)"
        case .noProgress: "no progress for too long"
        case .noRetriesLeft: "no retries left (--retry)"
        case .stopping: "transferd was stopping"
        case .maxTime: "--max-time is a limit, not a fault ('transferctl retry ID' tries again)"
        }
    }
}
