/// Which queued job runs next: priorities, the global and per-host caps, and preemption.
extension Scheduler {
    /// Keeps the running set, the per-host counts, the run and retry queues and the batches'
    /// unfinished counts in step with a job's state;
    /// called after every change of an in-memory job's state (`old` nil for a job just loaded).
    func track(_ scheduled: ScheduledJob, from old: JobState?) {
        let new = scheduled.job.state
        guard old != new else { return }
        admission.track(scheduled.id, host: scheduled.host, priority: scheduled.job.priority, from: old, to: new)
        if new == .waiting, let due = scheduled.job.nextAttemptAt {
            retryQueue.push(RetryEntry(due: due, id: scheduled.id))
        }
        if let batch = scheduled.job.batch { batches.track(batch: batch, from: old, to: new) }
    }

    /// Takes a newly queued job into memory and announces it.
    func adopt(_ job: Job) {
        let scheduled = ScheduledJob(job: job, now: now)
        jobs[job.id] = scheduled
        track(scheduled, from: nil)
        var event = TransferEvent(.jobCreated, job: job.id)
        event.state = job.state
        event.bytesDone = job.bytesDone
        event.bytesTotal = job.bytesTotal
        event.batch = job.batch
        event.reason = "\(job.kind.rawValue) \(job.displayURL)"
        events.publish(event)
    }

    /// Starts queued jobs — best priority, then oldest — while slots are free and their host is
    /// under its cap; then lets a waiting high-priority job take a low one's slot.
    func startNext() {
        guard !stopping else { return }
        while let id = admission.next(isCurrent: isQueued), let scheduled = jobs[id] {
            begin(scheduled)
        }
        preemptIfNeeded()
    }

    private func isQueued(_ entry: RunQueue.Entry) -> Bool {
        guard let job = jobs[entry.id]?.job else { return false }
        return job.state == .queued && job.priority.rank == entry.rank
    }

    /// A queued high job that cannot start (every slot, or its host's, is taken) takes the slot of
    /// the most recently started low job, which is checkpointed and queued again. One at a time:
    /// when it is done, `startNext` starts the high job and looks again.
    func preemptIfNeeded() {
        guard !stopping,
              let (victimID, high) = admission.preemption(isCurrent: isQueued,
                                                          preemptible: { jobs[$0]?.transfer != nil }) else { return }
        guard let victim = jobs[victimID] else { return admission.preemptionEnded() }
        logger.info("job \(victim.id): giving its slot to high-priority job \(high)")
        suspend(victim, to: .queued, reason: "preempted by job \(high) (high priority)") { [unowned self] _ in
            admission.preemptionEnded()
            startNext()
        }
    }

    /// Stops a running job's transfer, keeps its durable bytes, and records the job as paused or
    /// queued; `done` runs once that is recorded (or could not be). A job that was not running
    /// only changes state.
    func suspend(_ scheduled: ScheduledJob, to state: JobState, reason: String,
                 done: @escaping (Result<Void, any Error>) -> Void) {
        let id = scheduled.id
        stopTransfer(of: scheduled) { [unowned self] transfer in
            guard scheduled.job.state.canTransition(to: state), jobs[id] === scheduled else { return done(.success(())) }
            let download = transfer as? DownloadTransfer
            let checkpoint = download?.checkpoint
            let file = download?.file
            let attempt = transfer.map { ($0.attempt, $0.status, $0.transferred, $0.easy.metrics) }
            if let (number, status, bytes, metrics) = attempt {
                attemptFinished(id, attempt: number, status: status, error: nil, bytes: bytes, metrics: metrics)
            }
            scheduled.detach()
            change(scheduled, StateChange(state, reason: reason, httpStatus: transfer?.status,
                                          bytesDone: checkpoint?.bytesDurable),
                   syncing: file, alsoRecord: { store in
                       // Stopped: the file as it is now is the file as transferd left it.
                       if let checkpoint, let file { try store.saveResume(id, checkpoint.identified(by: file, writing: false)) }
                       if let (number, status, bytes, metrics) = attempt {
                           try store.finishAttempt(id, number: number, httpStatus: status, error: nil, bytes: bytes,
                                                   metrics: metrics)
                       }
                   }) { result in done(result) }
        }
    }
}
