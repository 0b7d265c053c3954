/// limit: one job's (`limit ID RATE`) or the daemon's (`limit --down/--up/--schedule`).
extension CommandService {
    /// A rate of 0 is unlimited; absent global fields are unchanged, an empty timetable removes
    /// it. The reply is the job, or the daemon's stats with the limits now in force.
    /// `modify ID`: changes a job that is not transferring; the reply is the job as recorded.
    func modify(_ request: ControlRequest, reply: @escaping Reply) {
        guard let ids = request.ids, ids.count == 1, let changes = request.changes, !changes.isEmpty else {
            return reply(.failure(ControlError(.badRequest, "modify needs one job id and something to change")))
        }
        scheduler.modify(ids[0], changes) { result in
            switch result {
            case .success(let job): reply(ControlResponse(job: job))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot record the change"))
            }
        }
    }

    func limit(_ request: ControlRequest, reply: @escaping Reply) {
        if let id = request.ids?.first {
            guard let rate = request.rate else {
                return reply(.failure(ControlError(.badRequest, "limit ID needs a rate")))
            }
            return scheduler.limitJob(id, to: rate == 0 ? nil : rate) { result in
                switch result {
                case .success(let job): reply(ControlResponse(job: job))
                case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot record the limit"))
                }
            }
        }
        var limits = scheduler.limits
        if let down = request.down { limits.down = down == 0 ? nil : down }
        if let up = request.up { limits.up = up == 0 ? nil : up }
        if let text = request.schedule {
            do {
                limits.schedule = text.isEmpty ? nil : try LimitSchedule.parse(text)
            } catch {
                return reply(.failure(ControlError(.invalidArgument, error.message)))
            }
        }
        scheduler.setLimits(limits) { [unowned self] result in
            switch result {
            case .success(let counts): reply(ControlResponse(stats: stats(counts)))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot record the limits"))
            }
        }
    }
}
