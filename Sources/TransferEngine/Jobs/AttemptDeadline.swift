/// When an attempt's `--max-time` runs out: fixed when its first request starts and kept by
/// every step of a redirect transferd follows, so the limit is the attempt's, as curl's is the
/// transfer's. Thread: a value; any.
struct AttemptDeadline: Equatable, Sendable {
    /// Monotonic seconds (`Monotonic.now`).
    let at: Double
    /// The job's `--max-time`.
    let seconds: Double

    /// Starting now; nil without a max time.
    init?(maxTime: Double?, now: Double = Monotonic.now) {
        guard let maxTime else { return nil }
        at = now + maxTime
        seconds = maxTime
    }

    /// What a request starting now may take (CURLOPT_TIMEOUT_MS), at least 1 ms: a step that
    /// starts after the deadline ends at once, with the same error.
    func remainingMilliseconds(now: Double = Monotonic.now) -> Int {
        max(1, Int(((at - now) * 1000).rounded(.up)))
    }

    /// libcurl ended the request with a timeout at or after the deadline: the max time ran out
    /// (a connect or stall timeout ends it before; a connect timeout longer than what is left
    /// is cut to it by libcurl, and is the max time's then).
    func expired(_ code: CurlCode, now: Double = Monotonic.now) -> Bool {
        code.isTimeout && now >= at
    }
}
