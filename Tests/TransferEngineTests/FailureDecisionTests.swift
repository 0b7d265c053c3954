import Testing
@testable import TransferEngine

/// What a failed attempt leads to, decided from values: the error and method, the job's retry
/// budget and progress, Retry-After, and the daemon stopping.
@Suite struct FailureDecisionTests {
    let now = Timestamp(milliseconds: 1_000_000_000)
    let decision = FailureDecision(policy: RetryPolicy(), noProgressMilliseconds: 30 * 60 * 1000, stopping: false)

    func job(attempts: Int = 1, method: String? = nil, retryUnsafe: Bool = false, url: String = "http://h:8080/f") -> Job {
        var job = Job(Job.Fields(id: JobID(rawValue: 1), kind: method == nil ? .download : .upload, state: .running,
                      stateReason: nil, url: url, path: "/d/f", headers: [], sha256: nil, overwrite: false,
                      priority: .normal, batch: nil, limit: nil, maxRetries: 3, bytesDone: 0, bytesTotal: nil,
                      attempts: attempts, httpStatus: nil, error: nil, nextAttemptAt: nil, createdAt: now,
                      updatedAt: now, finishedAt: nil, method: method, upload: nil))
        job.retryUnsafe = retryUnsafe
        return job
    }

    func failure(_ error: TransferError, job: Job? = nil, attemptLimit: Int = 4, lastProgress: Timestamp? = nil,
                 retryAfter: Int64? = nil, requestSent: Bool = false) -> FailureDecision.Failure {
        FailureDecision.Failure(error: error, status: error.status, bytesDone: 100, retryAfter: retryAfter,
                                requestSent: requestSent, job: job ?? self.job(), attemptLimit: attemptLimit,
                                lastProgress: lastProgress ?? now)
    }

    /// The largest jitter: the backoff at its ceiling.
    func decide(_ failure: FailureDecision.Failure, with decision: FailureDecision? = nil) -> (StateChange, RetryRefusal?) {
        let (change, refusal) = (decision ?? self.decision).decide(failure, now: now) { $0.upperBound }
        return (change, refusal)
    }

    @Test func aRetryableErrorWaitsForTheBackoff() {
        let (change, refusal) = decide(failure(.httpStatus(503), job: job(attempts: 2)))
        #expect(refusal == nil)
        #expect(change.state == .waiting && change.waitReason == .backoff)
        #expect(change.nextAttemptAt == now.adding(milliseconds: 2000), "the 2nd attempt's ceiling: 2 s")
        #expect(change.bytesDone == 100, "a download keeps its bytes")
    }

    @Test func retryAfterIsAFloorUnderTheBackoffAndIsCapped() {
        let (change, _) = decide(failure(.httpStatus(429), retryAfter: 30_000))
        #expect(change.nextAttemptAt == now.adding(milliseconds: 30_000))
        let (capped, _) = decide(failure(.httpStatus(503), retryAfter: 10 * 3_600_000))
        #expect(capped.nextAttemptAt == now.adding(milliseconds: RetryPolicy().maxDelayMilliseconds))
    }

    @Test func anUnreachableHostWaitsOfflineForItsProbe() {
        let (change, refusal) = decide(failure(.unreachable("Could not connect")))
        #expect(refusal == nil)
        #expect(change.waitReason == .offline)
        #expect(change.reason?.contains("http://h:8080") == true, "names the host: \(change.reason ?? "")")
        #expect(change.nextAttemptAt == now.adding(milliseconds: RetryPolicy().maxDelayMilliseconds), "a fallback")
    }

    @Test func aFullDiskPausesTheJob() {
        let (change, refusal) = decide(failure(.diskFull(path: "/d/f")))
        #expect(change.state == .paused && refusal == nil)
    }

    @Test func aPermanentErrorFailsAtOnce() {
        for error: TransferError in [.httpStatus(404), .tls("bad"), .checksumMismatch(expected: "a", actual: "b"),
                                     .tooLarge(limit: 1), .busy(path: "/p")] {
            let (change, refusal) = decide(failure(error))
            #expect(change.state == .failed && refusal == .permanent, "\(error)")
        }
    }

    @Test func theRetryBudgetEndsIt() {
        let (change, refusal) = decide(failure(.network("reset"), job: job(attempts: 4), attemptLimit: 4))
        #expect(change.state == .failed && refusal == .noRetriesLeft)
    }

    @Test func noProgressForTooLongFailsButAShortageOfDescriptorsNever() {
        let long = now.adding(milliseconds: -(31 * 60 * 1000))
        let (stuck, refusal) = decide(failure(.network("reset"), lastProgress: long))
        #expect(stuck.state == .failed && refusal == .noProgress)
        #expect(stuck.reason?.hasPrefix("no progress for 1800 s") == true)
        let (shortage, none) = decide(failure(.fdShortage("no fd"), lastProgress: long))
        #expect(none == nil && shortage.waitReason == .descriptors)
        #expect(shortage.nextAttemptAt! <= now.adding(milliseconds: 8000), "asked for again within seconds")
    }

    @Test func aStoppingDaemonRetriesNothing() {
        let stopping = FailureDecision(policy: RetryPolicy(), noProgressMilliseconds: 60_000, stopping: true)
        let (change, refusal) = decide(failure(.network("reset")), with: stopping)
        #expect(change.state == .failed && refusal == .stopping)
    }

    @Test func aPostTheServerMayHaveActedOnIsNotRetriedUnlessAllowed() {
        let post = job(method: "POST")
        let (failed, refusal) = decide(failure(.httpStatus(500), job: post, requestSent: true))
        #expect(failed.state == .failed && refusal == .unsafeMethod)
        let (cut, none) = decide(failure(.network("reset"), job: post, requestSent: false))
        #expect(cut.state == .waiting && none == nil, "a body cut off: the server cannot have acted")
        let (allowed, _) = decide(failure(.httpStatus(500), job: job(method: "POST", retryUnsafe: true), requestSent: true))
        #expect(allowed.state == .waiting)
        let (put, _) = decide(failure(.httpStatus(500), job: job(method: "PUT"), requestSent: true))
        #expect(put.state == .waiting, "PUT is idempotent")
    }
}
