/// What a failed attempt leads to — waiting (for the backoff, the host or a descriptor), paused
/// (the disk is full) or failed, with the typed reason it is not retried — decided from values
/// alone: the error, the job and its budget, the time, and a random source for the jitter.
/// Unit-tested without a loop, curl or a store.
struct FailureDecision {
    var policy: RetryPolicy
    /// A job that kept no new byte for this long fails instead of retrying.
    var noProgressMilliseconds: Int64
    /// The daemon is stopping: nothing is retried (the job continues at the next start).
    var stopping: Bool

    /// How the attempt ended, and what its job was when it did.
    struct Failure {
        var error: TransferError
        var status: Int?
        /// The job's bytes after it (a download's durable ones).
        var bytesDone: Int64?
        /// The server's Retry-After, in milliseconds.
        var retryAfter: Int64?
        /// The whole request went out (its server may have acted on it).
        var requestSent: Bool
        var job: Job
        var attemptLimit: Int
        var lastProgress: Timestamp
    }

    func decide(_ failure: Failure, now: Timestamp,
                random: (ClosedRange<Double>) -> Double) -> (change: StateChange, refusal: RetryRefusal?) {
        let error = failure.error
        if case .diskFull = error {
            return (StateChange(.paused, reason: "disk full: free space, then resume", error: error.record,
                                httpStatus: failure.status, bytesDone: failure.bytesDone), nil)
        }
        if let refusal = refusal(failure, now: now) {
            let reason = switch refusal {
            case .noProgress: "no progress for \(noProgressMilliseconds / 1000) s: \(error.message)"
            case .unsafeMethod: "\(error.message); not retried: \(refusal.message)"
            case .permanent, .noRetriesLeft, .stopping, .maxTime: error.message
            }
            return (StateChange(.failed, reason: reason, error: error.record, httpStatus: failure.status,
                                bytesDone: failure.bytesDone), refusal)
        }
        return (wait(failure, now: now, random: random), nil)
    }

    /// Why it is not tried again: the policy's answer for its error and method first, then the
    /// job's progress, its retries, and the daemon stopping. Nil: it is retried.
    func refusal(_ failure: Failure, now: Timestamp) -> RetryRefusal? {
        let job = failure.job
        // A tus PATCH names the offset it continues and an S3 part replaces itself: repeating
        // either repeats no effect.
        if let refusal = policy.refusal(for: failure.error, method: job.method ?? "GET", requestSent: failure.requestSent,
                                        retryUnsafe: job.retryUnsafe || job.remote != nil) {
            return refusal
        }
        // A shortage of descriptors is the daemon's, not the job's: it never ends a job.
        if !failure.error.isShortOfDescriptors,
           now.rawValue.saturatingSubtract(failure.lastProgress.rawValue) > noProgressMilliseconds {
            return .noProgress
        }
        if job.attempts >= failure.attemptLimit { return .noRetriesLeft }
        return stopping ? .stopping : nil
    }

    /// Waiting: for the host to answer, or until the backoff (and the server's Retry-After) has passed.
    private func wait(_ failure: Failure, now: Timestamp, random: (ClosedRange<Double>) -> Double) -> StateChange {
        let (error, job) = (failure.error, failure.job)
        if case .unreachable = error {
            // The host's probe queues the job as soon as it answers; the due time is a fallback.
            let due = now.adding(milliseconds: policy.maxDelayMilliseconds)
            let host = HostProbe(jobURL: job.url)?.key ?? job.url
            return StateChange(.waiting, reason: "offline: \(host) does not answer; retrying when it does (\(error.message))",
                               error: error.record, httpStatus: failure.status, nextAttemptAt: due,
                               bytesDone: failure.bytesDone, waitReason: .offline)
        }
        // The server's Retry-After (capped) is a floor under the backoff; descriptors are
        // asked for again within seconds (the backoff of a 4th attempt at most).
        let shortage = error.isShortOfDescriptors
        let backoff = policy.delay(afterAttempt: shortage ? min(job.attempts, 4) : job.attempts, random: random)
        let delay = max(backoff, min(failure.retryAfter ?? 0, policy.maxDelayMilliseconds))
        let due = now.adding(milliseconds: delay)
        let reason = "attempt \(job.attempts + 1) of \(failure.attemptLimit) at \(due.iso8601) after: \(error.message)"
        return StateChange(.waiting, reason: reason, error: error.record, httpStatus: failure.status, nextAttemptAt: due,
                           bytesDone: failure.bytesDone, waitReason: shortage ? .descriptors : .backoff)
    }
}

extension TransferError {
    var isShortOfDescriptors: Bool {
        if case .fdShortage = self { true } else { false }
    }

    var isDiskFull: Bool {
        if case .diskFull = self { true } else { false }
    }
}
