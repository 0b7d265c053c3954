/// add, list, show, stats, resume-data; pause, resume, cancel, retry; wait.
extension CommandService {
    // MARK: add, list, show, stats, resume-data

    func add(_ new: NewJob?, reply: @escaping Reply) {
        guard let new else { return reply(.failure(ControlError(.badRequest, "add needs a 'job' object"))) }
        scheduler.queue(new) { result in
            switch result {
            case .success(let job): reply(ControlResponse(job: job))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot queue the job"))
            }
        }
    }

    func list(_ request: ControlRequest, reply: @escaping Reply) {
        scheduler.jobs(state: request.state, batch: request.batch, before: request.before,
                       limit: request.limit ?? 1000) { result in
            switch result {
            case .success(let jobs): reply(ControlResponse(jobs: jobs))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot read jobs"))
            }
        }
    }

    func show(_ request: ControlRequest, reply: @escaping Reply) {
        guard let id = request.ids?.first else { return reply(.failure(ControlError(.badRequest, "show needs a job id"))) }
        scheduler.details(of: id) { result in
            switch result {
            case .success(let details):
                var response = ControlResponse(job: details.job, attempts: details.attempts, response: details.response,
                                               hookRuns: details.hookRuns)
                response.uploadSession = details.session.map(Redaction.session)
                reply(response)
            case .failure(let refusal):
                reply(Self.failure(refusal, doing: "cannot read job \(id)"))
            }
        }
    }

    func stats(reply: @escaping Reply) {
        scheduler.counts { [unowned self] result in
            switch result {
            case .success(let counts): reply(ControlResponse(stats: stats(counts)))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot read stats"))
            }
        }
    }

    /// What the daemon is and does right now, with the store's `counts` of jobs by state.
    func stats(_ counts: [JobState: Int]) -> DaemonStats {
        var jobs: [String: Int] = [:]
        for state in JobState.allCases { jobs[state.rawValue] = counts[state] ?? 0 }
        let configuration = scheduler.configuration
        let limits = scheduler.limits
        return DaemonStats(
            version: TransferdVersion.current, pid: ProcessIdentity.pid,
            stateDirectory: configuration.stateDirectory, jobs: jobs, maxActive: configuration.maxActive,
            rates: DaemonStats.Rates(down: scheduler.downloadRate, up: scheduler.uploadRate),
            limits: DaemonStats.Rates(down: scheduler.downBucket.bucket.rate, up: scheduler.upBucket.bucket.rate),
            configuredLimits: DaemonStats.Rates(down: limits.down, up: limits.up),
            schedule: limits.schedule?.text, scheduleEntry: scheduler.scheduleEntry?.text,
            maxPerHost: configuration.maxPerHost)
    }

    func resumeData(_ request: ControlRequest, reply: @escaping Reply) {
        guard let id = request.ids?.first else {
            return reply(.failure(ControlError(.badRequest, "resume-data needs a job id")))
        }
        scheduler.resumeData(of: id) { result in
            switch result {
            case .success(let data): reply(ControlResponse(resumeData: data))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot read job \(id)"))
            }
        }
    }

    // MARK: pause, resume, cancel, retry

    /// Applies the command to the named jobs, a batch's or all: the reply lists the jobs it
    /// changed and those already where it would move them, or every refusal (the first one's
    /// code, all their messages).
    func act(_ command: JobCommand, _ request: ControlRequest, reply: @escaping Reply) {
        guard let selection = Self.selection(request) else {
            return reply(.failure(ControlError(.badRequest, "\(command.rawValue) needs job ids or --all")))
        }
        scheduler.perform(command, on: selection) { result in
            switch result {
            case .success(let outcome):
                if let first = outcome.refusals.first {
                    let message = outcome.refusals.map(\.message).joined(separator: "; ")
                    reply(.failure(ControlError(ControlError(first).code, message)))
                } else {
                    var response = ControlResponse(jobs: outcome.changed)
                    response.unchanged = outcome.unchanged.isEmpty ? nil : outcome.unchanged
                    reply(response)
                }
            case .failure(let refusal):
                reply(.failure(ControlError(refusal)))
            }
        }
    }

    /// `--batch` first, then `--all`, then the ids; nil when the request names no job.
    private static func selection(_ request: ControlRequest) -> JobSelection? {
        if let batch = request.batch { return .batch(batch) }
        if request.all == true { return .all }
        guard let ids = request.ids, !ids.isEmpty else { return nil }
        return .ids(ids)
    }

    // MARK: wait

    /// Answers once every job waited for has ended (a batch's: every job of it, ended ones too,
    /// so that the exit status says whether all completed).
    func wait(_ request: ControlRequest, connection: Int, reply: @escaping Reply) {
        guard let selection = Self.selection(request) else {
            return reply(.failure(ControlError(.badRequest, "wait needs job ids, --batch or --all")))
        }
        let doing = if case .batch(let batch) = selection { "cannot read batch \(batch)" } else { "cannot read jobs" }
        scheduler.wait(for: selection, owner: connection) { result in
            switch result {
            case .success(let jobs) where request.brief == true:
                var response = ControlResponse()
                if request.ranges == true {
                    let completed = jobs.filter { $0.state == .completed }
                    response.completed = JobIDRange.covering(completed.map(\.id))
                    response.outcomes = jobs.filter { $0.state != .completed }.map(JobOutcome.init)
                } else {
                    response.outcomes = jobs.map(JobOutcome.init)
                }
                reply(response)
            case .success(let jobs):
                reply(ControlResponse(jobs: jobs))
            case .failure(let refusal):
                reply(Self.failure(refusal, doing: doing))
            }
        }
    }
}
