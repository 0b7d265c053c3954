/// Users' commands, `wait`, and the daemon stopping, as the decision core decides them.
extension SchedulerCore {
    /// Pause, resume, cancel or retry one job; `ack` is answered once the change is recorded.
    mutating func perform(_ command: JobCommand, _ id: JobID, loaded: Job?, ack token: Int, now: Timestamp) {
        let ack = CommandAck(token: token, command: command)
        // A job read from the store that a prune is deleting is gone: it must not come back.
        guard let job = jobs[id]?.job ?? loaded.flatMap({ pruningIDs.contains($0.id) ? nil : $0 }) else {
            return refuse(ack, .unknownJob(id))
        }
        if command == .retry, job.isQuarantined, let error = job.error {
            return refuse(ack, .quarantined(id, reason: error.message))
        }
        if command.isSatisfied(by: job.state), jobs[id].map({ $0.phase == .idle || $0.phase == .attempt }) ?? true {
            return refuse(ack, .unchanged(command, id, job.state))
        }
        guard let target = command.target(from: job.state) else {
            return refuse(ack, .notAllowed(command, id, job.state))
        }
        guard let record = jobs[id] else {
            // Not in memory: it failed. A retry owns its destination again first (the job stays
            // in memory, failed, meanwhile: a cancel or another retry then finds it).
            jobs[id] = JobRecord(job: job, now: now)
            if target == .queued, job.kind == .download, let path = job.path {
                jobs[id]?.phase = .claiming(acks: [ack])
                return appendAction(.claimDestination(id, path: path))
            }
            track(jobs[id]!, from: nil)
            return target == .queued ? requeue(id, acks: [ack], now: now) : cancel(id, acks: [ack], report: nil, now: now)
        }
        switch (target, record.phase) {
        case (.queued, .claiming(let acks)):
            jobs[id]?.phase = .claiming(acks: acks + [ack])
        case (.queued, _):
            transition(id, StateChange(.queued, reason: command == .retry ? "retry by user" : "resumed by user"),
                       now: now, acks: [ack])
        case (_, .attempt):
            stop(id, target == .paused ? .suspend(.paused, reason: .pausedByUser, acks: [ack]) : .cancel(acks: [ack]))
        case (_, .stopping(let intent)):
            jobs[id]?.phase = .stopping(intent.merged(with: Self.intent(target, ack)))
        case (_, .finalizing(let deferred)):
            let intent = Self.intent(target, ack)
            jobs[id]?.phase = .finalizing(then: deferred.map { $0.merged(with: intent) } ?? intent)
        case (.paused, .idle):
            transition(id, StateChange(.paused, reason: StopReason.pausedByUser.text), now: now, acks: [ack])
        default:
            cancel(id, acks: [ack], report: nil, now: now)
        }
    }

    /// `modify`: the job in memory takes the changed values (a queued one is queued again under
    /// its priority and host, the old entry no longer current).
    mutating func modify(_ changed: Job, now: Timestamp) {
        guard var record = jobs[changed.id], JobChanges.allows(record.job.state), record.phase == .idle else { return }
        var job = changed
        job.state = record.job.state
        record.modified(to: job, now: now)
        jobs[job.id] = record
        if job.state == .queued { admission.requeue(job.id, priority: job.priority, host: record.host) }
    }

    private static func intent(_ target: JobState, _ ack: CommandAck) -> StopIntent {
        target == .paused ? .suspend(.paused, reason: .pausedByUser, acks: [ack]) : .cancel(acks: [ack])
    }

    /// A failed download's destination is its own again (or is another job's now): the retries
    /// that asked for it queue it, unless a cancel came first.
    mutating func claimed(_ id: JobID, _ result: Result<Void, CommandRefusal>, now: Timestamp) {
        guard let record = jobs[id], case .claiming(let acks) = record.phase else { return }
        switch result {
        case .success:
            jobs[id]?.phase = .idle
            requeue(id, acks: acks, now: now)
        case .failure(let refusal):
            jobs[id] = nil  // it stays failed, which a wait begun meanwhile was waiting to learn
            for ack in acks { refuse(ack, refusal) }
            wakeWaiters(record.job)
        }
    }

    /// A failed job queued again by `retry`, with a full retry budget.
    private mutating func requeue(_ id: JobID, acks: [CommandAck], now: Timestamp) {
        jobs[id]?.renewRetryBudget(now: now)
        transition(id, StateChange(.queued, reason: "retry by user"), now: now, acks: acks)
    }

    /// Cancels a job that is not transferring: its partial file goes before the end is recorded
    /// (once it is, the destination may belong to another job). Retries waiting for its
    /// destination are refused.
    mutating func cancel(_ id: JobID, acks: [CommandAck], report: AttemptReport?, now: Timestamp) {
        if case .claiming(let retries)? = jobs[id]?.phase {
            jobs[id]?.phase = .idle
            for retry in retries { refuse(retry, .notAllowed(.retry, id, .cancelled)) }
        }
        let partialPath = jobs[id]?.job.partialPath
        let resumable = jobs[id].map { $0.job.kind == .upload && $0.job.remote != nil } ?? false
        transition(id, StateChange(.cancelled, reason: "cancelled by user"), now: now, acks: acks) { record in
            record.partial = partialPath.map { .remove($0) } ?? .none
            record.discardsUpload = resumable
            record.resume = .delete
            record.attempt = report?.record(error: nil)
        }
    }

    mutating func refuse(_ ack: CommandAck, _ refusal: CommandRefusal) {
        appendAction(.acknowledge(ack.token, .failure(refusal)))
    }

    // MARK: wait

    /// Answers once every job of `ids` has ended; `ended` are jobs the store had seen end.
    mutating func wait(_ token: Int, owner: Int, _ ids: Set<JobID>, ended: [Job]) {
        var waiter = Waiter(owner: owner, token: token, remaining: ids, ended: [])
        for job in ended where job.state.hasEnded && jobs[job.id] == nil && ending[job.id] == nil {
            if waiter.remaining.remove(job.id) != nil { waiter.ended.append(job) }
        }
        if waiter.remaining.isEmpty {
            appendAction(.answer(token: token, waiter.ended))
        } else {
            waiters.append(waiter)
        }
    }

    /// A job's end is recorded: answer the waiters it was the last one for.
    mutating func wakeWaiters(_ job: Job) {
        // In place: a waiter of thousands of jobs must not be copied at every end.
        var index = waiters.startIndex
        while index < waiters.endIndex {
            if waiters[index].remaining.remove(job.id) != nil { waiters[index].ended.append(job) }
            if waiters[index].remaining.isEmpty {
                let waiter = waiters.remove(at: index)
                appendAction(.answer(token: waiter.token, waiter.ended))
            } else {
                index += 1
            }
        }
    }

    // MARK: Stopping

    /// Checkpoints every running transfer and queues its job again; a job finishing its file
    /// finishes it. `shutdownComplete` once every one is recorded.
    mutating func shutdown() {
        stopping = true
        for (id, record) in jobs where record.job.state == .running {
            stillRunning.insert(id)
            if record.phase == .attempt { stop(id, .suspend(.queued, reason: .daemonStopped, acks: [])) }
        }
        if stillRunning.isEmpty { appendAction(.shutdownComplete) }
    }
}
