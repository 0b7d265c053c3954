/// Pause, resume, cancel and retry: each job moves as the command asks, and a command is
/// acknowledged only once recorded.
extension Scheduler {
    /// Finds the selected jobs (from memory, else from the store), then applies the command to
    /// each. Fails as a whole only for a batch that does not exist.
    func perform(_ command: JobCommand, on selection: JobSelection,
                 done: @escaping (Result<CommandOutcome, CommandRefusal>) -> Void) {
        let batch: Int64?
        switch selection {
        case .ids(let ids): return perform(command, onIDs: ids, done: done)
        case .all: batch = nil
        case .batch(let id): batch = id
        }
        let inMemory = jobs.values.filter { batch == nil || $0.job.batch == batch }
        guard command == .retry || command == .cancel || batch != nil else {
            let targets = inMemory.filter { Self.acceptsBulk(command, $0.job) }.sorted { $0.id < $1.id }
            return apply(command, to: targets.map { .success($0) }) { done(.success($0)) }
        }
        // Failed jobs have left memory: find them in the store (and check that the batch exists).
        let findFailed = command == .retry || command == .cancel
        read({ store in
            if let batch, try store.batchRecord(batch) == nil { throw CommandRefusal.unknownBatch(batch) }
            return findFailed ? try store.jobs(state: .failed, batch: batch, limit: Int.max) : []
        }) { [unowned self] result in
            if case .failure(let refusal as CommandRefusal) = result { return done(.failure(refusal)) }
            let failed = ((try? result.get()) ?? []).filter { jobs[$0.id] == nil }.map { ScheduledJob(job: $0, now: now) }
            let targets = (jobs.values.filter { batch == nil || $0.job.batch == batch } + failed)
                .filter { Self.acceptsBulk(command, $0.job) }
                .sorted { $0.id < $1.id }
            apply(command, to: targets.map { .success($0) }) { done(.success($0)) }
        }
    }

    private func perform(_ command: JobCommand, onIDs ids: [JobID], done: @escaping (Result<CommandOutcome, CommandRefusal>) -> Void) {
        let missing = ids.filter { jobs[$0] == nil }
        read({ store in try missing.map { id in (id, try store.job(id)) } }) { [unowned self] result in
            let loaded = (try? result.get()) ?? []
            let found = Dictionary(loaded.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
            let targets: [Result<ScheduledJob, CommandRefusal>] = ids.map { id in
                if let scheduled = jobs[id] { return .success(scheduled) }
                guard let job = found[id] ?? nil else { return .failure(.unknownJob(id)) }
                return .success(ScheduledJob(job: job, now: now))
            }
            apply(command, to: targets) { done(.success($0)) }
        }
    }

    private static func acceptsBulk(_ command: JobCommand, _ job: Job) -> Bool {
        let state = job.state
        switch command {
        case .pause: return state == .queued || state == .running || state == .waiting
        case .resume: return state == .paused || state == .waiting
        case .cancel: return !state.isFinal
        case .retry: return (state == .failed || state == .waiting) && !job.isQuarantined
        }
    }

    private func apply(_ command: JobCommand, to targets: [Result<ScheduledJob, CommandRefusal>],
                       done: @escaping (CommandOutcome) -> Void) {
        var refusals: [CommandRefusal] = []
        var changed: [ScheduledJob] = []
        var remaining = 1
        let finishOne = {
            remaining -= 1
            guard remaining == 0 else { return }
            done(CommandOutcome(changed: changed.map(\.live), refusals: refusals))
        }
        for target in targets {
            switch target {
            case .failure(let refusal):
                refusals.append(refusal)
            case .success(let scheduled):
                if command == .retry, scheduled.job.isQuarantined, let error = scheduled.job.error {
                    refusals.append(.quarantined(scheduled.id, reason: error.message))
                    continue
                }
                guard let target = Self.target(of: command, from: scheduled.job.state) else {
                    refusals.append(.notAllowed(command, scheduled.id, scheduled.job.state))
                    continue
                }
                remaining += 1
                changed.append(scheduled)
                perform(command, on: scheduled, to: target) { refusal in
                    if let refusal {
                        refusals.append(refusal)
                        changed.removeAll { $0 === scheduled }
                    }
                    finishOne()
                }
            }
        }
        finishOne()
        startNext()
    }

    /// The state a command moves a job to, or nil when the job's state does not allow it.
    static func target(of command: JobCommand, from state: JobState) -> JobState? {
        let target: JobState
        switch (command, state) {
        case (.pause, _): target = .paused
        case (.resume, .paused), (.resume, .waiting): target = .queued
        case (.cancel, _): target = .cancelled
        case (.retry, .failed), (.retry, .waiting): target = .queued
        default: return nil
        }
        return state.canTransition(to: target) ? target : nil
    }

    /// Moves one job; `done` gets the reason it could not.
    private func perform(_ command: JobCommand, on scheduled: ScheduledJob, to target: JobState,
                         done: @escaping (CommandRefusal?) -> Void) {
        let id = scheduled.id
        if target == .queued {
            if scheduled.job.state == .failed {
                return retryFailed(scheduled, done: done)
            }
            let reason = command == .retry ? "retry by user" : "resumed by user"
            return change(scheduled, StateChange(.queued, reason: reason), then: { result in
                done(Self.unrecorded(command, id, result))
            })
        }
        if target == .paused {
            return suspend(scheduled, to: .paused, reason: "paused by user") { result in done(Self.unrecorded(command, id, result)) }
        }
        stopTransfer(of: scheduled) { [unowned self] transfer in
            let attempt = transfer.map { ($0.attempt, $0.status, $0.transferred, $0.easy.metrics) }
            if let (number, status, bytes, metrics) = attempt {
                attemptFinished(id, attempt: number, status: status, error: nil, bytes: bytes, metrics: metrics)
            }
            let partialPath = scheduled.job.partialPath
            scheduled.detach()
            change(scheduled, StateChange(.cancelled, reason: "cancelled by user"), removing: partialPath, alsoRecord: { store in
                try store.deleteResume(id)
                if let (number, status, bytes, metrics) = attempt {
                    try store.finishAttempt(id, number: number, httpStatus: status, error: nil, bytes: bytes, metrics: metrics)
                }
            }) { result in
                done(Self.unrecorded(command, id, result))
            }
        }
    }

    /// A command is acknowledged only once recorded: a store that could not record it (a full
    /// disk) refuses it, and the command may be given again.
    private static func unrecorded(_ command: JobCommand, _ id: JobID, _ result: Result<Void, any Error>) -> CommandRefusal? {
        guard case .failure(let error) = result else { return nil }
        return .notRecorded(command, id, "\(error)")
    }

    /// A failed job is queued again once it owns its destination again (another job may have
    /// taken it meanwhile: then it stays failed, and the refusal names that job).
    private func retryFailed(_ scheduled: ScheduledJob, done: @escaping (CommandRefusal?) -> Void) {
        let id = scheduled.id
        let requeue = { [unowned self] in
            guard scheduled.job.state == .failed, jobs[id] == nil || jobs[id] === scheduled else {
                return done(.notAllowed(.retry, id, scheduled.job.state))
            }
            scheduled.renewRetryBudget()
            scheduled.lastProgress = now
            jobs[id] = scheduled
            change(scheduled, StateChange(.queued, reason: "retry by user"), then: { result in
                done(Self.unrecorded(.retry, id, result))
            })
            // The claim came back after the command's own startNext: start it now.
            startNext()
        }
        guard scheduled.job.kind == .download, let path = scheduled.job.path else { return requeue() }
        read({ store in try store.claimDestination(of: id, path: path) }) { result in
            switch result {
            case .success: requeue()
            case .failure(let error as DestinationRefusal): done(.destination(error))
            case .failure(let error): done(.notClaimed(id, "\(error)"))
            }
        }
    }
}
