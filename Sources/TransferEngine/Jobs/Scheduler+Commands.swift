/// Control requests: each becomes reads from the store or state changes, answered once recorded.
extension Scheduler {
    func handle(_ request: ControlRequest, from origin: ControlServer.Origin, reply: @escaping Reply) {
        let connection = origin.connection
        loop.assertOnLoopThread()
        guard request.version == ControlRequest.protocolVersion else {
            return reply(.failure(ControlError(.unsupportedVersion,
                "protocol version \(request.version) is not supported; this daemon speaks \(ControlRequest.protocolVersion)")))
        }
        do { try request.checkNumbers() } catch { return reply(.failure(ControlError(.invalidArgument, error.message))) }
        switch request.command {
        case .add: add(request.job, reply: reply)
        case .list: list(request, reply: reply)
        case .show: show(request, reply: reply)
        case .pause, .resume, .cancel, .retry: act(request, reply: reply)
        case .wait: wait(request, connection: connection, reply: reply)
        case .stats: stats(reply: reply)
        case .resumeData: resumeData(request, reply: reply)
        case .submit: submit(request.submission, from: origin, reply: reply)
        case .batchList: batchList(reply: reply)
        case .batchShow: batchShow(request, reply: reply)
        case .limit: limit(request, reply: reply)
        case .events: streamEvents(request, connection: connection, reply: reply)
        }
    }

    /// Keeps a reply for a continuation that comes back through the inbox.
    func later(_ reply: @escaping Reply) -> Int {
        let token = nextToken()
        pendingReplies[token] = reply
        return token
    }

    func respond(_ token: Int, _ response: ControlResponse) {
        pendingReplies.removeValue(forKey: token)?(response)
    }

    // MARK: add, list, show, stats, resume-data

    private func add(_ new: NewJob?, reply: @escaping Reply) {
        guard let new else { return reply(.failure(ControlError(.badRequest, "add needs a 'job' object"))) }
        do {
            try JobValidation.validate(new)
        } catch {
            return reply(.failure(ControlError(error)))
        }
        let token = later(reply)
        let retries = configuration.defaultRetries
        stored({ store in
            if let batch = new.batch, try store.batchRecord(batch) == nil { throw JobRefusal.unknownBatch(batch) }
            return try store.queue(new, defaultRetries: retries)
        }) { scheduler, result in
            switch result {
            case .success(let job):
                scheduler.logger.info("job \(job.id): queued \(job.kind.rawValue) \(job.displayURL) \(job.kind == .download ? "->" : "<-") \(job.path ?? "form")")
                if job.tls.insecure {
                    scheduler.logger.warn("job \(job.id): TLS verification is off for \(job.displayURL) (--insecure)")
                }
                scheduler.adopt(job)
                scheduler.respond(token, ControlResponse(job: job))
                scheduler.startNext()
            case .failure(let error as JobRefusal):
                scheduler.respond(token, .failure(ControlError(error)))
            case .failure(let error as DestinationRefusal):
                scheduler.respond(token, .failure(ControlError(.destination(error))))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot queue the job: \(error)")))
            }
        }
    }

    private func list(_ request: ControlRequest, reply: @escaping Reply) {
        let token = later(reply)
        let state = request.state
        let batch = request.batch
        let limit = request.limit ?? 1000
        let before = request.before
        stored({ store in try store.jobs(state: state, batch: batch, before: before, limit: limit) }) { scheduler, result in
            switch result {
            case .success(let jobs):
                // The store's state filter saw its snapshot; the reply keeps only jobs still in it.
                let current = jobs.map(scheduler.current).filter { state == nil || $0.state == state }
                scheduler.respond(token, ControlResponse(jobs: current))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot read jobs: \(error)")))
            }
        }
    }

    private func show(_ request: ControlRequest, reply: @escaping Reply) {
        guard let id = request.ids?.first else { return reply(.failure(ControlError(.badRequest, "show needs a job id"))) }
        let token = later(reply)
        stored({ store in
            try store.job(id).map { ($0, try store.attempts(id), try store.response(id), try store.hookRuns(job: id)) }
        }) { scheduler, result in
            if scheduler.ending[id] != nil, let reply = scheduler.pendingReplies.removeValue(forKey: token) {
                // It ended in memory after (or before) this read: answer from the record of its end.
                scheduler.whenEndRecorded[id, default: []].append { [unowned scheduler] in scheduler.show(request, reply: reply) }
                return
            }
            switch result {
            case .success(.some(let (job, attempts, response, hookRuns))):
                scheduler.respond(token, ControlResponse(job: scheduler.current(job), attempts: attempts,
                                                         response: response, hookRuns: hookRuns))
            case .success(.none):
                scheduler.respond(token, .failure(ControlError(.unknownJob, "no job \(id)")))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot read job \(id): \(error)")))
            }
        }
    }

    private func stats(reply: @escaping Reply) {
        let token = later(reply)
        stored({ store in try store.countsByState() }) { scheduler, result in
            switch result {
            case .success(let counts):
                scheduler.respond(token, ControlResponse(stats: scheduler.stats(counts)))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot read stats: \(error)")))
            }
        }
    }

    func stats(_ counts: [JobState: Int]) -> DaemonStats {
        var jobs: [String: Int] = [:]
        for state in JobState.allCases { jobs[state.rawValue] = counts[state] ?? 0 }
        return DaemonStats(
            version: TransferdVersion.current, pid: ProcessIdentity.pid,
            stateDirectory: configuration.stateDirectory, jobs: jobs, maxActive: configuration.maxActive,
            rates: DaemonStats.Rates(down: downloadRate, up: uploadRate),
            limits: DaemonStats.Rates(down: downBucket.bucket.rate, up: upBucket.bucket.rate),
            configuredLimits: DaemonStats.Rates(down: limits.down, up: limits.up),
            schedule: limits.schedule?.text, scheduleEntry: scheduleEntry?.text, maxPerHost: configuration.maxPerHost)
    }

    private func resumeData(_ request: ControlRequest, reply: @escaping Reply) {
        guard let id = request.ids?.first else {
            return reply(.failure(ControlError(.badRequest, "resume-data needs a job id")))
        }
        let token = later(reply)
        stored({ store in (try store.job(id), try store.resumeState(id)) }) { scheduler, result in
            switch result {
            case .success((.some(let job), .some(let state))):
                scheduler.respond(token, ControlResponse(resumeData: ResumeData(job: job, state: state)))
            case .success((.some(let job), .none)):
                scheduler.respond(token, .failure(ControlError(.illegalTransition,
                    "job \(id) has no resume data: it is \(job.state.rawValue)")))
            case .success((.none, _)):
                scheduler.respond(token, .failure(ControlError(.unknownJob, "no job \(id)")))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot read job \(id): \(error)")))
            }
        }
    }

    // MARK: pause, resume, cancel, retry

    /// Finds the named jobs (from memory, else from the store), then applies the command to each.
    private func act(_ request: ControlRequest, reply: @escaping Reply) {
        let command = request.command
        if request.all == true || request.batch != nil {
            let batch = request.batch
            let inMemory = jobs.values.filter { batch == nil || $0.job.batch == batch }
            guard command == .retry || command == .cancel || batch != nil else {
                let targets = inMemory.filter { Self.acceptsBulk(command, $0.job) }.sorted { $0.id < $1.id }
                return apply(command, to: targets.map { .success($0) }, reply: reply)
            }
            // Failed jobs have left memory: find them in the store (and check that the batch exists).
            let findFailed = command == .retry || command == .cancel
            let token = later(reply)
            stored({ store in
                if let batch, try store.batchRecord(batch) == nil { throw ControlError(.unknownBatch, "no batch \(batch)") }
                return findFailed ? try store.jobs(state: .failed, batch: batch, limit: Int.max) : []
            }) { scheduler, result in
                guard let reply = scheduler.pendingReplies.removeValue(forKey: token) else { return }
                if case .failure(let error as ControlError) = result { return reply(.failure(error)) }
                let failed = ((try? result.get()) ?? []).filter { scheduler.jobs[$0.id] == nil }.map { ScheduledJob(job: $0, now: scheduler.now) }
                let targets = (scheduler.jobs.values.filter { batch == nil || $0.job.batch == batch } + failed)
                    .filter { Self.acceptsBulk(command, $0.job) }
                    .sorted { $0.id < $1.id }
                scheduler.apply(command, to: targets.map { .success($0) }, reply: reply)
            }
            return
        }
        guard let ids = request.ids, !ids.isEmpty else {
            return reply(.failure(ControlError(.badRequest, "\(command.rawValue) needs job ids or --all")))
        }
        let missing = ids.filter { jobs[$0] == nil }
        let token = later(reply)
        stored({ store in try missing.map { id in (id, try store.job(id)) } }) { scheduler, result in
            guard let reply = scheduler.pendingReplies.removeValue(forKey: token) else { return }
            let loaded = (try? result.get()) ?? []
            let found = Dictionary(loaded.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
            let targets: [Result<ScheduledJob, ControlError>] = ids.map { id in
                if let scheduled = scheduler.jobs[id] { return .success(scheduled) }
                guard let job = found[id] ?? nil else { return .failure(ControlError(.unknownJob, "no job \(id)")) }
                return .success(ScheduledJob(job: job, now: scheduler.now))
            }
            scheduler.apply(command, to: targets, reply: reply)
        }
    }

    private static func acceptsBulk(_ command: ControlCommand, _ job: Job) -> Bool {
        let state = job.state
        switch command {
        case .pause: return state == .queued || state == .running || state == .waiting
        case .resume: return state == .paused || state == .waiting
        case .cancel: return !state.isFinal
        case .retry: return (state == .failed || state == .waiting) && !job.isQuarantined
        default: return false
        }
    }

    private func apply(_ command: ControlCommand, to targets: [Result<ScheduledJob, ControlError>], reply: @escaping Reply) {
        var errors: [ControlError] = []
        var changed: [ScheduledJob] = []
        var remaining = 1
        let finishOne = {
            remaining -= 1
            guard remaining == 0 else { return }
            if let first = errors.first {
                let message = errors.map(\.message).joined(separator: "; ")
                reply(.failure(ControlError(first.code, message)))
            } else {
                reply(ControlResponse(jobs: changed.map(\.live)))
            }
        }
        for target in targets {
            switch target {
            case .failure(let error):
                errors.append(error)
            case .success(let scheduled):
                if command == .retry, scheduled.job.isQuarantined, let error = scheduled.job.error {
                    errors.append(ControlError(.illegalTransition, "cannot retry job \(scheduled.id): \(error.message)"))
                    continue
                }
                guard let target = Self.target(of: command, from: scheduled.job.state) else {
                    errors.append(ControlError(.illegalTransition,
                        "cannot \(command.rawValue) job \(scheduled.id): it is \(scheduled.job.state.rawValue)"))
                    continue
                }
                remaining += 1
                changed.append(scheduled)
                perform(command, on: scheduled, to: target) { error in
                    if let error {
                        errors.append(error)
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
    static func target(of command: ControlCommand, from state: JobState) -> JobState? {
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
    private func perform(_ command: ControlCommand, on scheduled: ScheduledJob, to target: JobState,
                         done: @escaping (ControlError?) -> Void) {
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
    /// disk) makes the reply an error, and the command may be given again.
    private static func unrecorded(_ command: ControlCommand, _ id: JobID, _ result: Result<Void, any Error>) -> ControlError? {
        guard case .failure(let error) = result else { return nil }
        return ControlError(.internal, "cannot record the \(command.rawValue) of job \(id): \(error) (free space, then \(command.rawValue) it again)")
    }

    /// A failed job is queued again once it owns its destination again (another job may have
    /// taken it meanwhile: then it stays failed, and the reply names that job).
    private func retryFailed(_ scheduled: ScheduledJob, done: @escaping (ControlError?) -> Void) {
        let id = scheduled.id
        let requeue = { [unowned self] in
            guard scheduled.job.state == .failed, jobs[id] == nil || jobs[id] === scheduled else {
                return done(ControlError(.illegalTransition, "cannot retry job \(id): it is \(scheduled.job.state.rawValue)"))
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
        let token = nextToken()
        pendingThen[token] = { result in
            switch result {
            case .success: requeue()
            case .failure(let error as DestinationRefusal): done(ControlError(.destination(error)))
            case .failure(let error): done(ControlError(.internal, "cannot retry job \(id): \(error)"))
            }
        }
        stored({ store in try store.claimDestination(of: id, path: path) }) { scheduler, result in
            scheduler.pendingThen.removeValue(forKey: token)?(result)
        }
    }

    // MARK: wait

    private func wait(_ request: ControlRequest, connection: Int, reply: @escaping Reply) {
        if let batch = request.batch {
            // Every job of the batch, ended ones too: the exit status says whether all completed.
            let token = later(reply)
            return stored({ store in
                guard try store.batchRecord(batch) != nil else { throw ControlError(.unknownBatch, "no batch \(batch)") }
                return try store.jobs(batch: batch, limit: Int.max)
            }) { scheduler, result in
                guard let reply = scheduler.pendingReplies.removeValue(forKey: token) else { return }
                switch result {
                case .success(let jobs):
                    scheduler.wait(for: jobs.map(\.id), loaded: jobs.map { ($0.id, $0) }, connection: connection, reply: reply)
                case .failure(let error as ControlError):
                    reply(.failure(error))
                case .failure(let error):
                    reply(.failure(ControlError(.internal, "cannot read batch \(batch): \(error)")))
                }
            }
        }
        let ids: [JobID]
        if request.all == true {
            ids = jobs.values.map(\.id)
        } else {
            guard let named = request.ids, !named.isEmpty else {
                return reply(.failure(ControlError(.badRequest, "wait needs job ids, --batch or --all")))
            }
            ids = named
        }
        let token = later(reply)
        let missing = ids.filter { jobs[$0] == nil }
        stored({ store in try missing.map { id in (id, try store.job(id)) } }) { scheduler, result in
            guard let reply = scheduler.pendingReplies.removeValue(forKey: token) else { return }
            let loaded = (try? result.get()) ?? []
            if let unknown = loaded.first(where: { $0.1 == nil }) {
                return reply(.failure(ControlError(.unknownJob, "no job \(unknown.0)")))
            }
            scheduler.wait(for: ids, loaded: loaded, connection: connection, reply: reply)
        }
    }

    /// Answers once every job of `ids` has ended; `loaded` are the jobs read from the store.
    private func wait(for ids: [JobID], loaded: [(JobID, Job?)], connection: Int, reply: @escaping Reply) {
        let token = later(reply)
        var waiter = Waiter(connection: connection, token: token, remaining: Set(ids), ended: [])
        for case let (id, job?) in loaded where job.state.hasEnded && jobs[id] == nil {
            waiter.remaining.remove(id)
            waiter.ended.append(job)
        }
        if waiter.remaining.isEmpty {
            respond(token, ControlResponse(jobs: waiter.ended))
        } else {
            waiters.append(waiter)
        }
    }

    /// A job reached completed, failed or cancelled (and that is recorded): wake its waiters.
    func jobEnded(_ job: Job) {
        if let batch = job.batch, batches.endRecorded(batch: batch) {
            collectionMaker.forget(batch: batch)
            batchEnded(batch)
        }
        // In place: a waiter of thousands of jobs must not be copied at every end.
        var index = waiters.startIndex
        while index < waiters.endIndex {
            if waiters[index].remaining.remove(job.id) != nil { waiters[index].ended.append(job) }
            if waiters[index].remaining.isEmpty {
                let waiter = waiters.remove(at: index)
                respond(waiter.token, ControlResponse(jobs: waiter.ended))
            } else {
                index += 1
            }
        }
    }

    /// The client went away: forget what it was waiting for.
    public func connectionClosed(_ connection: Int) {
        dropSubmissions(of: connection)
        events.unsubscribe(connection)
        for waiter in waiters where waiter.connection == connection { pendingReplies[waiter.token] = nil }
        waiters.removeAll { $0.connection == connection }
    }
}
