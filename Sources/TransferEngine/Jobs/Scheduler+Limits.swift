/// Bandwidth limits: the timetable applied to the global buckets, and the `limit` command.
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

    /// `limit ID RATE` changes one job's limit; `limit --down/--up/--schedule` the daemon's.
    /// Running transfers follow at once; the change is persisted.
    func limit(_ request: ControlRequest, reply: @escaping Reply) {
        if let id = request.ids?.first {
            guard let rate = request.rate else {
                return reply(.failure(ControlError(.badRequest, "limit ID needs a rate")))
            }
            let limit = rate == 0 ? nil : rate
            feed(.limit(id, limit))
            if let transfer = engine[id]?.transfer {
                transfer.pacer.setRate(limit)
                transfer.pacer.recheck()
            }
            let token = later(reply)
            return stored({ store in
                guard let job = try store.job(id) else { throw ControlError(.unknownJob, "no job \(id)") }
                guard !job.state.isFinal else {
                    throw ControlError(.illegalTransition, "cannot limit job \(id): it is \(job.state.rawValue)")
                }
                try store.setLimit(id, limit)
                return try store.job(id)
            }) { scheduler, result in
                switch result {
                case .success(let job):
                    scheduler.logger.info("job \(id): limit \(Rate.describe(limit))")
                    var event = TransferEvent(.limitChanged, job: id)
                    event.limit = limit
                    scheduler.events.publish(event)
                    scheduler.respond(token, ControlResponse(job: job.map(scheduler.current)))
                case .failure(let error as ControlError):
                    scheduler.respond(token, .failure(error))
                case .failure(let error):
                    scheduler.respond(token, .failure(ControlError(.internal, "cannot record the limit: \(error)")))
                }
            }
        }
        var limits = limits
        if let down = request.down { limits.down = down == 0 ? nil : down }
        if let up = request.up { limits.up = up == 0 ? nil : up }
        if let text = request.schedule {
            do {
                limits.schedule = text.isEmpty ? nil : try LimitSchedule.parse(text)
            } catch {
                return reply(.failure(ControlError(.invalidArgument, error.message)))
            }
        }
        let changed = limits != self.limits
        self.limits = limits
        if changed { applyLimits() }
        let token = later(reply)
        let settings = limits
        stored({ store in
            if changed { try settings.save(to: store) }
            return try store.countsByState()
        }) { scheduler, result in
            switch result {
            case .success(let counts):
                scheduler.respond(token, ControlResponse(stats: scheduler.stats(counts)))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot record the limits: \(error)")))
            }
        }
    }
}
