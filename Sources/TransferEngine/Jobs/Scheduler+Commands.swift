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
        let token = nextAnswerToken()
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
                scheduler.respond(token, ControlResponse(job: scheduler.current(job)))
            case .failure(let error as JobRefusal):
                scheduler.respond(token, .failure(ControlError(error)))
            case .failure(let error as DestinationRefusal):
                scheduler.respond(token, .failure(ControlError(JobRefusal.destination(error))))
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
            if scheduler.isEnding(id), let reply = scheduler.pendingReplies.removeValue(forKey: token) {
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
        guard let command = JobCommand(rawValue: request.command.rawValue) else {
            return reply(.failure(ControlError(.badRequest, "not a job command")))
        }
        if request.all == true || request.batch != nil {
            let batch = request.batch
            let inMemory = unfinishedJobs.filter { batch == nil || $0.batch == batch }
            guard command == .retry || command == .cancel || batch != nil else {
                let targets = inMemory.filter { command.appliesInBulk(to: $0) }.sorted { $0.id < $1.id }
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
                let failed = ((try? result.get()) ?? []).filter { !scheduler.isInMemory($0.id) }
                let targets = (scheduler.unfinishedJobs.filter { batch == nil || $0.batch == batch } + failed)
                    .filter { command.appliesInBulk(to: $0) }
                    .sorted { $0.id < $1.id }
                scheduler.apply(command, to: targets.map { .success($0) }, reply: reply)
            }
            return
        }
        guard let ids = request.ids, !ids.isEmpty else {
            return reply(.failure(ControlError(.badRequest, "\(command.rawValue) needs job ids or --all")))
        }
        let missing = ids.filter { !isInMemory($0) }
        let token = later(reply)
        stored({ store in try missing.map { id in (id, try store.job(id)) } }) { scheduler, result in
            guard let reply = scheduler.pendingReplies.removeValue(forKey: token) else { return }
            let loaded = (try? result.get()) ?? []
            let found = Dictionary(loaded.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
            let targets: [Result<Job, CommandRefusal>] = ids.map { id in
                if let job = scheduler.core.jobs[id]?.job { return .success(job) }
                guard let job = found[id] ?? nil else { return .failure(.unknownJob(id)) }
                return .success(job)
            }
            scheduler.apply(command, to: targets, reply: reply)
        }
    }

    /// Applies the command to each target; answers with the jobs changed, or every refusal.
    private func apply(_ command: JobCommand, to targets: [Result<Job, CommandRefusal>], reply: @escaping Reply) {
        var results: [Result<Job, CommandRefusal>?] = Array(repeating: nil, count: targets.count)
        var remaining = targets.count + 1
        let finishOne = {
            remaining -= 1
            guard remaining == 0 else { return }
            let refusals = results.compactMap { result -> CommandRefusal? in
                if case .failure(let refusal)? = result { refusal } else { nil }
            }
            if let first = refusals.first {
                let error = ControlError(first)
                reply(.failure(ControlError(error.code, refusals.map(\.message).joined(separator: "; "))))
            } else {
                reply(ControlResponse(jobs: results.compactMap { try? $0?.get() }))
            }
        }
        for (index, target) in targets.enumerated() {
            switch target {
            case .failure(let refusal):
                results[index] = .failure(refusal)
                finishOne()
            case .success(let job):
                self.command(command, job.id, loaded: isInMemory(job.id) ? nil : job) { result in
                    results[index] = result
                    finishOne()
                }
            }
        }
        finishOne()
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
                    scheduler.wait(for: Set(jobs.map(\.id)), ended: jobs, connection: connection) { reply(ControlResponse(jobs: $0)) }
                case .failure(let error as ControlError):
                    reply(.failure(error))
                case .failure(let error):
                    reply(.failure(ControlError(.internal, "cannot read batch \(batch): \(error)")))
                }
            }
        }
        let ids: [JobID]
        if request.all == true {
            ids = unfinishedJobs.map(\.id)
        } else {
            guard let named = request.ids, !named.isEmpty else {
                return reply(.failure(ControlError(.badRequest, "wait needs job ids, --batch or --all")))
            }
            ids = named
        }
        let token = later(reply)
        let missing = ids.filter { !isInMemory($0) }
        stored({ store in try missing.map { id in (id, try store.job(id)) } }) { scheduler, result in
            guard let reply = scheduler.pendingReplies.removeValue(forKey: token) else { return }
            let loaded = (try? result.get()) ?? []
            if let unknown = loaded.first(where: { $0.1 == nil }) {
                return reply(.failure(ControlError(.unknownJob, "no job \(unknown.0)")))
            }
            scheduler.wait(for: Set(ids), ended: loaded.compactMap(\.1), connection: connection) { reply(ControlResponse(jobs: $0)) }
        }
    }
}
