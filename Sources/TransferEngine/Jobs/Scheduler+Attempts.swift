import Dispatch

/// How attempts end: checkpoints while they run, and the decision when they stop.
extension Scheduler {
    /// The running transfer of attempt `attempt` of job `id`, if it is still the current one.
    func transfer(_ id: JobID, attempt: Int) -> DownloadTransfer? {
        guard let transfer = jobs[id]?.transfer as? DownloadTransfer, transfer.attempt == attempt else { return nil }
        return transfer
    }

    /// Syncs the bytes written so far and records their length (fdatasync before the record).
    func checkpoint(_ transfer: DownloadTransfer) {
        transfer.durabilityInFlight = true
        let state = transfer.checkpoint
        let id = transfer.jobID
        let attempt = transfer.attempt
        let received = transfer.received
        let file = transfer.file
        durably({ try file.sync() }, record: { store in
            try store.saveResume(id, state.identified(by: file, writing: true))
            try store.recordAttemptBytes(id, number: attempt, bytes: received)
        }) { scheduler, result in
            guard let transfer = scheduler.transfer(id, attempt: attempt) else { return }
            switch result {
            case .success:
                transfer.recorded(state)
            case .failure(let error):
                scheduler.logger.warn("job \(id): checkpoint failed: \(error)")
                transfer.durabilityFailed()
            }
        }
    }

    /// A 200 replaced the entity we were continuing: empty the partial file, record the new
    /// entity at 0 bytes, then let the paused transfer write from the start.
    func truncate(_ transfer: DownloadTransfer) {
        transfer.durabilityInFlight = true
        var state = transfer.resume
        state.bytesDurable = 0
        let fresh = state
        let id = transfer.jobID
        let attempt = transfer.attempt
        let file = transfer.file
        logger.info("job \(id): the server sent the whole entity; starting over from byte 0")
        durably({ try file.truncate(to: 0) }, record: { try $0.saveResume(id, fresh.identified(by: file, writing: true)) }) { scheduler, result in
            guard let transfer = scheduler.transfer(id, attempt: attempt), let scheduled = scheduler.jobs[id] else { return }
            switch result {
            case .success:
                transfer.truncated(fresh)
            case .failure(let error):
                transfer.durabilityFailed()
                scheduler.stopTransfer(of: scheduled) { transfer in
                    let outcome = AttemptOutcome.failed(error as? TransferError ?? .io(path: file.path, operation: "truncate", errno: 0))
                    scheduler.conclude(scheduled, attempt: attempt, outcome: outcome, transfer: transfer)
                }
            }
        }
    }

    /// Decides what follows an attempt that stopped by itself, and records it.
    func conclude(_ scheduled: ScheduledJob, attempt: Int, outcome: AttemptOutcome, transfer: (any Transfer)?) {
        guard jobs[scheduled.id] === scheduled, scheduled.job.state == .running, scheduled.job.attempts == attempt else {
            return
        }
        let id = scheduled.id
        // An attempt that ended before its request was sent (a refused MKCOL) has that status.
        let status = transfer?.status ?? outcome.failure?.status
        let received = transfer?.transferred ?? 0
        let download = transfer as? DownloadTransfer
        let checkpoint = download?.checkpoint
        let file = download?.file
        let response = (transfer as? UploadTransfer)?.response
        let metrics = transfer?.easy.metrics
        if case .failed(let error) = outcome {
            attemptFinished(id, attempt: attempt, status: status, error: error, bytes: received, metrics: metrics)
        } else if case .startOver(let reason) = outcome {
            attemptFinished(id, attempt: attempt, status: status, error: .sourceChanged(reason), bytes: received,
                            metrics: metrics)
        } else if download == nil {
            attemptFinished(id, attempt: attempt, status: status, error: nil, bytes: received, metrics: metrics)
        }
        switch outcome {
        case .completed:
            if let download {
                logger.debug("job \(id): attempt \(attempt) received \(received) bytes; finishing the file")
                finalize(scheduled, attempt: attempt, file: download.file, state: download.checkpoint, transfer: download,
                         metrics: metrics)
            } else {
                logger.info("job \(id): completed, sent \(received) bytes, HTTP \(status ?? 0)")
                ended(scheduled, StateChange(.completed, httpStatus: status, bytesDone: received)) { store in
                    if let response { try store.saveResponse(id, response) }
                    try store.finishAttempt(id, number: attempt, httpStatus: status, error: nil, bytes: received,
                                            metrics: metrics)
                    try store.markBackupUploaded(id)
                }
            }
        case .failed(let error):
            switch error {
            case .unreachable, .fdShortage:
                scheduled.extendRetryBudget()  // waiting for the host, or for a descriptor, uses up no retry
            default:
                break
            }
            // Bytes a download keeps are progress; an upload sends its body again, so sending is not.
            if let checkpoint { scheduled.attemptKept(checkpoint.bytesDurable, now: now) }
            // A body past --max-filesize leaves nothing behind (the partial file is removed before
            // the end is recorded); other failures keep their bytes for `retry`.
            let discarded: String? = if case .tooLarge = error { scheduled.job.partialPath } else { nil }
            let requestSent = (transfer as? UploadTransfer)?.requestSent ?? false
            let (decided, refusal) = afterFailure(scheduled, error, status: status, bytesDone: checkpoint?.bytesDurable,
                                                  retryAfter: transfer?.retryAfter, requestSent: requestSent)
            var next = decided
            let record: @Sendable (JobStore) throws -> Void = { store in
                if discarded != nil {
                    try store.deleteResume(id)
                } else if let checkpoint, let file {
                    try store.saveResume(id, checkpoint.identified(by: file, writing: false))
                }
                if let response { try store.saveResponse(id, response) }
                try store.finishAttempt(id, number: attempt, httpStatus: status, error: error.record, bytes: received,
                                        metrics: metrics)
                if let refusal { try store.recordRefusal(id, number: attempt, refusal) }
            }
            if discarded != nil { next.bytesDone = 0 }
            logger.info("job \(id): attempt \(attempt) failed: \(error.message); now \(next.state.rawValue)"
                + (refusal.map { " (not retried: \($0.message))" } ?? ""))
            if next.waitReason == .offline { waitForHost(scheduled) }
            if next.state == .waiting {
                var event = TransferEvent(.retryScheduled, job: id)
                event.attempt = attempt + 1
                event.nextAttemptAt = next.nextAttemptAt
                event.reason = next.reason
                event.error = error.record
                events.publish(event)
            }
            scheduled.detach()
            // A failed job keeps its bytes for `retry`; with none, it leaves no empty file behind.
            // Either is removed before the end is recorded, which frees the destination.
            let emptyPartial = download != nil && next.state == .failed && (checkpoint?.bytesDurable ?? 0) == 0
                ? scheduled.job.partialPath : nil
            let removed = discarded ?? emptyPartial
            change(scheduled, next, syncing: removed == nil ? file : nil, removing: removed, alsoRecord: record) { [unowned self] _ in
                scheduleRetryTimer()
            }
            startNext()
        case .redirect(let target):
            guard let download else { preconditionFailure("only a download follows a redirect itself") }
            follow(scheduled, attempt: attempt, from: download, to: target)
        case .startOver(let reason):
            logger.info("job \(id): attempt \(attempt): \(reason); starting over from byte 0")
            let fresh = checkpoint.map { ResumeState(partialPath: $0.partialPath) }
            let error = TransferError.sourceChanged(reason)
            let next = scheduled.job.attempts < scheduled.attemptLimit
                ? StateChange(.queued, reason: "starting over: \(reason)", bytesDone: 0)
                : StateChange(.failed, reason: "too many attempts", error: error.record, httpStatus: status, bytesDone: 0)
            // The next attempt's preparation cuts the partial file back to the recorded 0 bytes.
            scheduled.detach()
            change(scheduled, next, alsoRecord: { store in
                if let fresh { try store.saveResume(id, fresh) }
                try store.finishAttempt(id, number: attempt, httpStatus: status, error: error.record, bytes: received,
                                        metrics: metrics)
            })
            startNext()
        }
    }

    /// A redirect transferd follows itself (`RedirectGuard`): the attempt goes on at `target` in
    /// a new request, which carries the secret headers only if `target` is the job's origin.
    private func follow(_ scheduled: ScheduledJob, attempt: Int, from download: DownloadTransfer, to target: String) {
        let redirects = RedirectGuard(jobURL: scheduled.job.url, tls: tlsOptions(scheduled.job))
        if let refusal = redirects.refusal(of: target) {
            return conclude(scheduled, attempt: attempt, outcome: .failed(refusal), transfer: download)
        }
        let headers = redirects.headers(download.headers, to: target)
        let dropped = headers.count < download.headers.count ? " (another origin: without the secret headers)" : ""
        logger.info("job \(scheduled.id): attempt \(attempt) is redirected to \(Redaction.url(target))\(dropped)")
        launchDownload(scheduled, attempt: attempt, url: target, headers: headers, redirectsLeft: download.redirectsLeft - 1,
                       file: download.file, resume: download.checkpoint)
    }

    /// Waiting with a due time, paused (disk full), or failed, with the reason it is not retried:
    /// `FailureDecision` decides, from the attempt's end and the job as it is.
    private func afterFailure(_ scheduled: ScheduledJob, _ error: TransferError, status: Int?, bytesDone: Int64?,
                              retryAfter: Int64?, requestSent: Bool) -> (StateChange, RetryRefusal?) {
        let decision = FailureDecision(policy: retryPolicy, noProgressMilliseconds: configuration.noProgressMilliseconds,
                                       stopping: stopping)
        let failure = FailureDecision.Failure(error: error, status: status, bytesDone: bytesDone, retryAfter: retryAfter,
                                              requestSent: requestSent, job: scheduled.job,
                                              attemptLimit: scheduled.attemptLimit, lastProgress: scheduled.lastProgress)
        let (change, refusal) = decision.decide(failure, now: now) { Double.random(in: $0) }
        return (change, refusal)
    }

    /// Syncs, verifies and renames the finished file into place off the loop thread; marks the
    /// resume state `finalizing` before the rename so a crash in between is recognised.
    func finalize(_ scheduled: ScheduledJob, attempt: Int, file: PartialFile, state: ResumeState,
                  transfer: DownloadTransfer?, metrics: AttemptMetrics? = nil) {
        let id = scheduled.id
        let expected = scheduled.job.sha256?.lowercased()
        let destination = scheduled.job.path ?? ""
        let overwrite = scheduled.job.overwrite
        let mode = FileModes(umask: scheduled.job.umask).file
        let status = transfer?.status
        let received = transfer?.received ?? 0
        let store = store
        let inbox = inbox!
        finishing.async {
            let result = Result<Void, any Error> {
                try file.sync()
                if let expected {
                    let actual = try file.sha256(length: state.bytesDurable)
                    guard actual == expected else { throw TransferError.checksumMismatch(expected: expected, actual: actual) }
                }
                var marked = state
                marked.finalizing = true
                let finalizing = marked
                try store.sync { try $0.saveResume(id, finalizing) }
                try file.moveIntoPlace(destination, replacing: overwrite, mode: mode)
            }
            inbox.post { scheduler in
                scheduler.finalized(id, attempt: attempt, result, state: state, status: status, received: received,
                                    metrics: metrics)
            }
        }
    }

    private func finalized(_ id: JobID, attempt: Int, _ result: Result<Void, any Error>, state: ResumeState,
                           status: Int?, received: Int64, metrics: AttemptMetrics?) {
        guard let scheduled = jobs[id], scheduled.job.state == .running else { return }
        let failure: TransferError?
        if case .failure(let error) = result {
            failure = error as? TransferError ?? .io(path: state.partialPath, operation: "finish", errno: 0)
        } else {
            failure = nil
        }
        attemptFinished(id, attempt: attempt, status: status, error: failure, bytes: received, metrics: metrics)
        switch result {
        case .success:
            logger.info("job \(id): completed, \(state.bytesDurable) bytes at \(scheduled.job.path ?? "")")
            ended(scheduled, StateChange(.completed, httpStatus: status, bytesDone: state.bytesDurable)) { store in
                try store.finishAttempt(id, number: attempt, httpStatus: status, error: nil, bytes: received,
                                        metrics: metrics)
                try store.deleteResume(id)
            }
        case .failure:
            let failure = failure ?? .io(path: state.partialPath, operation: "finish", errno: 0)
            logger.warn("job \(id): cannot finish: \(failure.message)")
            let discard: Bool
            if case .checksumMismatch = failure { discard = true } else { discard = false }
            ended(scheduled, StateChange(.failed, reason: failure.message, error: failure.record, httpStatus: status,
                                         bytesDone: discard ? 0 : state.bytesDurable),
                  removing: discard ? state.partialPath : nil) { store in
                try store.finishAttempt(id, number: attempt, httpStatus: status, error: failure.record, bytes: received,
                                        metrics: metrics)
                if discard { try store.deleteResume(id) }
            }
        }
    }
}
