/// How attempts end, as the decision core decides it: finished (a download then finalizes),
/// failed (`FailureDecision`), starting over, stopped on request, or stalled.
extension SchedulerCore {
    mutating func attemptEnded(_ id: JobID, _ report: AttemptReport, now: Timestamp) {
        guard isCurrentAttempt(id, report.attempt), let job = jobs[id]?.job else { return }
        learn(from: report, id)
        switch report.outcome {
        case .completed where job.kind == .download:
            log(.debug, "job \(id): attempt \(report.attempt) received \(report.transferred) bytes; finishing the file")
            finalize(id, report, now: now)
        case .completed:
            publishAttemptFinished(id, report, error: nil)
            log(Self.completionLevel(job), "job \(id): completed, sent \(report.transferred) bytes, HTTP \(report.status ?? 0)")
            transition(id, StateChange(.completed, httpStatus: report.status, bytesDone: report.serverBytes ?? report.transferred),
                       now: now) {
                $0.attempt = report.record(error: nil)
                $0.response = report.response
                $0.backupUploaded = true
            }
        case .failed(let error):
            publishAttemptFinished(id, report, error: error)
            fail(id, report, error, now: now)
        case .startOver(let reason):
            let error = TransferError.sourceChanged(reason)
            publishAttemptFinished(id, report, error: error)
            startOver(id, report, reason: reason, now: now)
        case .redirect:
            preconditionFailure("the engine follows redirects itself")
        }
    }

    /// A failed attempt: waiting (for the backoff, the host or a descriptor), paused (disk
    /// full) or failed, as `FailureDecision` decides from the job and its budget.
    private mutating func fail(_ id: JobID, _ report: AttemptReport, _ error: TransferError, now: Timestamp) {
        guard var record = jobs[id] else { return }
        // Refused credentials: `--header-command` runs once more for an attempt right away,
        // which uses up no retry.
        let refused = if case .httpStatus(let status) = error { status == 401 || status == 403 } else { false }
        if refused, record.job.headerCommand != nil, !record.credentialsRenewed, !stopping {
            record.credentialsRenewed = true
            record.extendRetryBudget()
            jobs[id] = record
            let reason = "HTTP \(report.status ?? 0): asking --header-command for new credentials"
            log(.info, "job \(id): attempt \(report.attempt): \(reason)")
            transition(id, StateChange(.queued, reason: reason, httpStatus: report.status), now: now) {
                $0.resume = report.resume.map { .save($0) } ?? .none
                $0.attempt = report.record(error: error)
            }
            return
        }
        record.credentialsRenewed = refused && record.credentialsRenewed
        switch error {
        case .unreachable, .fdShortage: record.extendRetryBudget()  // waiting uses up no retry
        default: break
        }
        // Bytes a download or a resumable upload keeps are progress; a plain upload sends its
        // body again, so sending is not.
        if let kept = report.keptBytes { record.attemptKept(kept, now: now) }
        jobs[id] = record
        let decision = FailureDecision(policy: settings.policy, noProgressMilliseconds: settings.noProgressMilliseconds,
                                       stopping: stopping)
        let failure = FailureDecision.Failure(error: error, status: report.status, bytesDone: report.keptBytes,
                                              retryAfter: report.retryAfter, requestSent: report.requestSent,
                                              job: record.job, attemptLimit: record.attemptLimit,
                                              lastProgress: record.lastProgress)
        var (next, refusal) = decision.decide(failure, now: now) { jitter(in: $0) }
        // A body past --max-filesize leaves nothing behind; other failures keep their bytes for
        // `retry`, and a failed download attempt that kept none leaves no empty file. Either is
        // removed before the end is recorded, which frees the destination.
        let discarded: String? = if case .tooLarge = error { record.job.partialPath } else { nil }
        if discarded != nil { next.bytesDone = 0 }
        // Only a file this attempt wrote (it has a report of it): a preparation that failed, a lock
        // held by another daemon, never touches the file.
        let empty = next.state == .failed && report.resume?.bytesDurable == 0
        let removed = discarded ?? (empty ? record.job.partialPath : nil)
        // A job's end in failure is what a user looks for in the log; a retry is routine.
        log(next.state == .failed ? .warn : .info, "job \(id): attempt \(report.attempt) failed: \(error.message); now \(next.state.rawValue)"
            + (refusal.map { " (not retried: \($0.message))" } ?? ""))
        if next.state == .waiting {
            var event = TransferEvent(.retryScheduled, of: record.job)
            event.attempt = report.attempt + 1
            event.nextAttemptAt = next.nextAttemptAt
            event.reason = next.reason
            event.error = error.record
            publish(event, of: id)
        }
        transition(id, next, now: now) {
            if let removed {
                $0.partial = .remove(removed)
            } else if report.resume != nil {
                $0.partial = .sync
            }
            $0.resume = discarded != nil ? .delete : report.resume.map { .save($0) } ?? .none
            $0.response = report.response
            $0.attempt = report.record(error: error)
            $0.refusal = refusal.map { (report.attempt, $0) }
        }
        if next.waitReason == .offline, let record = jobs[id] { waitForHost(record) }
        armRetryTimer(now: now)
    }

    /// The server changed the entity (or the range): forget the bytes and start from 0.
    private mutating func startOver(_ id: JobID, _ report: AttemptReport, reason: String, now: Timestamp) {
        guard let record = jobs[id] else { return }
        log(.info, "job \(id): attempt \(report.attempt): \(reason); starting over from byte 0")
        let error = TransferError.sourceChanged(reason)
        let next = record.job.attempts < record.attemptLimit
            ? StateChange(.queued, reason: "starting over: \(reason)", bytesDone: 0)
            : StateChange(.failed, reason: "too many attempts", error: error.record, httpStatus: report.status, bytesDone: 0)
        // The next attempt's preparation cuts the partial file back to the recorded 0 bytes.
        transition(id, next, now: now) {
            $0.resume = report.resume.map { .save(ResumeState(partialPath: $0.partialPath)) } ?? .none
            $0.attempt = report.record(error: error)
        }
    }

    /// A transfer the core stopped is off the engine: what it was stopped for applies now.
    mutating func stopped(_ id: JobID, _ report: AttemptReport?, now: Timestamp) {
        guard let record = jobs[id], case .stopping(let intent) = record.phase else { return }
        if case .fail(let error) = intent {
            var report = report ?? AttemptReport(attempt: record.job.attempts, outcome: .completed)
            report.outcome = .failed(error)
            jobs[id]?.phase = .attempt
            return attemptEnded(id, report, now: now)
        }
        if let report {
            learn(from: report, id)
            publishAttemptFinished(id, report, error: nil)
        }
        apply(intent, to: id, report: report, now: now)
    }

    /// A pause, preemption, shutdown or cancel takes effect: the job keeps its durable bytes
    /// (a cancel removes them).
    private mutating func apply(_ intent: StopIntent, to id: JobID, report: AttemptReport?, now: Timestamp) {
        switch intent {
        case .suspend(let state, let reason, let acks):
            let change = StateChange(state, reason: reason.text, httpStatus: report?.status,
                                     bytesDone: report?.keptBytes)
            transition(id, change, now: now, acks: acks) {
                // Stopped: the file as it is now is the file as transferd left it.
                if let resume = report?.resume {
                    $0.partial = .sync
                    $0.resume = .save(resume)
                }
                $0.attempt = report?.record(error: nil)
            }
            if case .preempted = reason { admission.preemptionEnded() }
        case .cancel(let acks):
            cancel(id, acks: acks, report: report, now: now)
        case .fail:
            preconditionFailure("a failure ends the attempt as such")
        }
    }

    /// A download's bytes have all arrived: its file is made durable and renamed into place,
    /// and its transfer slot goes to the next job meanwhile. Its completion's record goes with
    /// it, to be written as soon as the rename is durable (none when the report does not tell
    /// the file's length: `finalized` records it then).
    mutating func finalize(_ id: JobID, _ report: AttemptReport, now: Timestamp) {
        guard let record = jobs[id] else { return }
        jobs[id]?.phase = .finalizing(then: nil)
        // Shown while it is synced: every byte has arrived (recorded once it is complete).
        if let received = report.resume?.bytesDurable { jobs[id]?.job.bytesDone = received }
        admission.finishes(id, host: record.host)
        let completion = report.resume.map { completionRecord(of: record.job, report, bytes: $0.bytesDurable, now: now) }
        appendAction(.finalize(id, report, completion: completion))
    }

    /// A download's completion: the change, and what is recorded with it.
    private static func completed(_ report: AttemptReport, bytes: Int64, total: Int64?) -> StateChange {
        StateChange(.completed, httpStatus: report.status, bytesDone: bytes, bytesTotal: total)
    }

    private static func completionDetails(_ report: AttemptReport) -> (inout StateRecord) -> Void {
        { record in
            record.attempt = report.record(error: nil)
            record.resume = .delete
        }
    }

    /// The record `finalized` would make of the completion, made ahead: the same change and
    /// details as `transition` writes, its token drawn and the hook the end makes due chosen
    /// from the job as it will be.
    private mutating func completionRecord(of job: Job, _ report: AttemptReport, bytes: Int64, now: Timestamp) -> StateRecord {
        let change = Self.completed(report, bytes: bytes, total: job.bytesTotal)
        var record = StateRecord(token: nextToken(), id: job.id, change: change, at: now)
        Self.completionDetails(report)(&record)
        if job.onComplete != nil {  // (the copy of the job only for a hook to run)
            var ended = job
            ended.apply(change, now: now)
            record.hook = PendingHook.forJob(ended)
        }
        return record
    }

    /// How a job's completion is logged: a line of its own at info, except in a batch, whose end
    /// says it for all of its jobs (`Scheduler.batchEnded`). A backup of small files completes
    /// thousands of jobs a second: a line for each cost ~2 % of a batch's files per second
    /// (BENCHMARKS.md) and would pass journald's rate limit, which then drops the warnings among
    /// them too. Failures and retries are logged for every job.
    static func completionLevel(_ job: Job) -> Logger.Level {
        job.batch == nil ? .info : .debug
    }

    /// Finalizing ended: the job completed, or failed (a checksum mismatch discards its bytes;
    /// a shortage of descriptors waits to try again); a pause or cancel given meanwhile applies
    /// only if it failed.
    /// `recorded`: the completion as the finishing group recorded it (`finalize`'s), applied
    /// as it was written.
    mutating func finalized(_ id: JobID, _ report: AttemptReport, _ result: Result<Int64, TransferError>,
                            recorded: RecordedCompletion? = nil, now: Timestamp) {
        guard let record = jobs[id], record.job.state == .running, record.job.attempts == report.attempt,
              case .finalizing(let deferred) = record.phase else { return }
        switch result {
        case .success(let bytes):
            publishAttemptFinished(id, report, error: nil)
            log(Self.completionLevel(record.job), "job \(id): completed, \(bytes) bytes at \(record.job.path ?? "")")
            if let recorded {
                assert(recorded.record.id == id && recorded.record.change.bytesDone == bytes, "job \(id): not its completion")
                transition(id, recorded.record.change, now: recorded.record.at, recorded: recorded)
            } else {
                transition(id, Self.completed(report, bytes: bytes, total: record.job.bytesTotal), now: now,
                           Self.completionDetails(report))
            }
            for ack in deferred?.acks ?? [] { refuse(ack, .notAllowed(ack.command, id, .completed)) }
        case .failure(let error):
            publishAttemptFinished(id, report, error: error)
            log(.warn, "job \(id): cannot finish: \(error.message)")
            let discard: Bool = if case .checksumMismatch = error { true } else { false }
            if let deferred, !discard {
                return apply(deferred, to: id, report: nil, now: now)
            }
            // Short of descriptors before its rename, or of space for its last bytes: they wait
            // for the next attempt (the job pauses on a full disk, as any attempt's write does).
            if error.isShortOfDescriptors || error.isDiskFull { return fail(id, report, error, now: now) }
            let partialPath = record.job.partialPath
            transition(id, StateChange(.failed, reason: error.message, error: error.record, httpStatus: report.status,
                                       bytesDone: discard ? 0 : report.resume?.bytesDurable), now: now) {
                $0.attempt = report.record(error: error)
                if discard {
                    $0.partial = partialPath.map { .remove($0) } ?? .none
                    $0.resume = .delete
                }
            }
            for ack in deferred?.acks ?? [] { refuse(ack, .notAllowed(ack.command, id, .failed)) }
        }
    }

    /// Once a second: an attempt that moved no byte for its stall time (and is not held back by
    /// a limit) is stopped and retried. libcurl's low-speed check averages over seconds, so a
    /// burst followed by silence would take several times longer to notice. One that trickles
    /// (`Activity.tooSlow`) is stopped and retried the same way.
    mutating func tick(_ activities: [SchedulerEvent.Activity]) {
        for activity in activities where isCurrentAttempt(activity.id, activity.attempt) {
            if let (limit, seconds) = activity.tooSlow {
                log(.info, "job \(activity.id): attempt \(activity.attempt) moved less than \(limit) bytes/s for \(seconds) s; "
                    + "retrying later, its slot to another job")
                stop(activity.id, .fail(.tooSlow(bytesPerSecond: limit, seconds: seconds)))
                continue
            }
            guard !activity.throttled, activity.idleSeconds > Double(activity.stallSeconds) else { continue }
            log(.info, "job \(activity.id): attempt \(activity.attempt) moved no byte for \(activity.stallSeconds) s; retrying")
            stop(activity.id, .fail(.stalled(seconds: activity.stallSeconds)))
        }
    }

    /// What the attempt learned about the entity (its size) stays with the job.
    private mutating func learn(from report: AttemptReport, _ id: JobID) {
        if let total = report.resume?.bytesTotal { jobs[id]?.job.bytesTotal = total }
    }

    /// Publishes the end of an attempt with what it measured.
    private mutating func publishAttemptFinished(_ id: JobID, _ report: AttemptReport, error: TransferError?) {
        var event = TransferEvent(.attemptFinished, job: id)
        event.batch = jobs[id]?.job.batch
        event.attempt = report.attempt
        event.httpStatus = report.status
        event.error = error?.record
        event.bytesDone = report.transferred
        event.metrics = report.metrics
        publish(event, of: id)
    }
}
