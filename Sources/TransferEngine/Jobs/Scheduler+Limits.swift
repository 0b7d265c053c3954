/// Bandwidth limits: the timetable applied to the global buckets, and limits set by users.
extension Scheduler {
    // MARK: Limits

    /// Puts the limits in force now into the global buckets (a timetable entry may have begun or
    /// ended); paused transfers re-evaluate at once when a limit changed.
    func applyLimits() {
        let now = limits.effective(at: configuration.wallClock.localTime)
        if now.entry != scheduleEntry {
            logger.info("limits now down \(Rate.describe(now.down)), up \(Rate.describe(now.up))" +
                        (now.entry.map { " (timetable: \($0.text))" } ?? ""))
        }
        scheduleEntry = now.entry
        var changed = false
        for (bucket, rate) in [(downBucket, now.down), (upBucket, now.up)] where bucket.bucket.rate != rate {
            bucket.setRate(rate, now: clock())
            changed = true
        }
        guard changed else { return }
        recheckPacers()
        var event = TransferEvent(.limitChanged)
        event.limits = DaemonStats.Rates(down: now.down, up: now.up)
        event.reason = now.entry.map { "timetable: \($0.text)" }
        events.publish(event)
    }

    func recheckPacers() {
        for engineJob in engine.values {
            engineJob.transfer?.pacer.recheck()
        }
    }

    // MARK: limit

    /// Changes one job's limit (nil: unlimited): a running transfer follows at once, and the
    /// change is persisted. `done` gets the job as recorded.
    func limitJob(_ id: JobID, to limit: Int64?, done: @escaping (Result<Job?, CommandRefusal>) -> Void) {
        feed(.limit(id, limit))
        if let transfer = engine[id]?.transfer {
            transfer.pacer.setRate(limit)
            transfer.pacer.recheck()
        }
        read({ store in
            guard let job = try store.job(id) else { throw CommandRefusal.unknownJob(id) }
            guard !job.state.isFinal else { throw CommandRefusal.notLimitable(id, job.state) }
            try store.setLimit(id, limit)
            return try store.job(id)
        }) { [unowned self] result in
            switch result {
            case .success(let job):
                logger.info("job \(id): limit \(Rate.describe(limit))")
                var event = TransferEvent(.limitChanged, job: id)
                event.batch = job?.batch
                event.limit = limit
                events.publish(event)
                done(.success(job.map(current)))
            case .failure(let refusal as CommandRefusal):
                done(.failure(refusal))
            case .failure(let error):
                done(.failure(.store("\(error)")))
            }
        }
    }

    // MARK: modify

    /// Changes a job that is not transferring (`JobChanges`): checked as a new job's values, in
    /// memory at once (an attempt that starts next uses them), then recorded. `done` gets the
    /// job as recorded.
    func modify(_ id: JobID, _ changes: JobChanges, done: @escaping (Result<Job, CommandRefusal>) -> Void) {
        let apply = { [unowned self] (job: Job) in
            guard JobChanges.allows(job.state), core.jobs[id].map({ $0.phase == .idle }) ?? true else {
                return done(.failure(.notModifiable(id, job.state)))
            }
            let changed: Job
            do throws(JobRefusal) { changed = try changes.applied(to: job) } catch { return done(.failure(.refused(error))) }
            feed(.modified(changed))
            // A resumable upload's session lives on the server it was made on: another origin
            // (or bucket and key) must not get its PATCHes, tokens or DELETE.
            let forgetting = job.remote != nil && changed.url != job.url
                && (job.remote?.kind == .s3 || HostKey.key(changed.url) != HostKey.key(job.url))
            read({ store in try store.modify(changed, forgettingSession: forgetting) ? try store.job(id) : nil }) { [unowned self] result in
                switch result {
                case .success(let stored?):
                    logger.info("job \(id): modified: \(changes.summary)")
                    var event = TransferEvent(.jobModified, of: stored)
                    event.reason = changes.summary
                    events.publish(event)
                    done(.success(current(stored)))
                case .success(nil):
                    done(.failure(.notModifiable(id, core.jobs[id]?.job.state ?? job.state)))
                case .failure(let error):
                    done(.failure(.store("\(error)")))
                }
            }
        }
        if let job = core.jobs[id]?.job { return apply(job) }
        read({ store in try store.job(id) }) { result in
            switch result {
            case .success(let job?): apply(job)
            case .success(nil): done(.failure(.unknownJob(id)))
            case .failure(let error): done(.failure(.store("\(error)")))
            }
        }
    }

    /// Makes `limits` the daemon's: in force at once, and persisted. `done` gets the jobs'
    /// counts by state, read once the limits are recorded.
    func setLimits(_ limits: LimitSettings, done: @escaping (Result<[JobState: Int], CommandRefusal>) -> Void) {
        let changed = limits != self.limits
        self.limits = limits
        if changed { applyLimits() }
        let settings = limits
        read({ store in
            if changed { try settings.save(to: store) }
            return try store.countsByState()
        }) { [unowned self] result in
            done(result.map { countingHeldStarts($0) }.mapError { .store("\($0)") })
        }
    }
}
