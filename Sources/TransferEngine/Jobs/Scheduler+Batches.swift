/// Batches: manifests queued in one transaction, batch totals, and the end of a batch.
extension Scheduler {
    /// More manifest entries than this in one submission are refused.
    static let maxSubmissionEntries = 250_000

    // MARK: submit

    /// Keeps a chunk of a manifest; at the final chunk queues all of it (or none) as one batch.
    func submit(_ submission: BatchSubmission?, connection: Int, reply: @escaping Reply) {
        guard var submission else { return reply(.failure(ControlError(.badRequest, "submit needs a 'submission' object"))) }
        let key = "\(connection) \(submission.token)"
        var entries = submissions.removeValue(forKey: key) ?? []
        entries += submission.entries
        // Bounded across every unfinished submission, so chunks that never end cannot fill memory.
        let elsewhere = submissions.values.reduce(0) { $0 + $1.count }
        guard entries.count + elsewhere <= Self.maxSubmissionEntries else {
            return reply(.failure(ControlError(.tooLarge, entries.count > Self.maxSubmissionEntries
                ? "a manifest may hold at most \(Self.maxSubmissionEntries) jobs"
                : "too many manifest entries are waiting for their last chunk; try again later")))
        }
        guard submission.final else {
            submissions[key] = entries
            return reply(ControlResponse(staged: entries.count))
        }
        submission.entries = entries
        let whole = submission
        let retries = configuration.defaultRetries
        let token = later(reply)
        stored({ store in try BatchQueueing.queue(whole, defaultRetries: retries, in: store) }) { scheduler, result in
            switch result {
            case .success(let outcome):
                scheduler.submitted(outcome, lines: whole.entries.count, token: token)
            case .failure(let error as ControlError):
                scheduler.respond(token, .failure(error))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot queue the manifest: \(error)")))
            }
        }
    }

    private func submitted(_ outcome: BatchQueueing.Outcome, lines: Int, token: Int) {
        let batch = outcome.batch
        if outcome.created {
            var event = TransferEvent(.batchCreated)
            event.batch = batch.id
            event.reason = batch.name
            events.publish(event)
        }
        logger.info("batch \(batch.id) (\(batch.name)): queued \(outcome.jobs.count) jobs, skipped \(outcome.skipped)")
        for job in outcome.jobs { adopt(job) }
        respond(token, ControlResponse(submitted: SubmissionResult(batch: batch.id, name: batch.name,
                                                                   jobs: outcome.jobs.count, skipped: outcome.skipped)))
        startNext()
        // A new batch with nothing to do (a backup of unchanged files) is done as soon as it exists.
        if outcome.created, lines > 0, outcome.jobs.isEmpty { batchEnded(batch.id) }
    }

    /// The client went away in the middle of a manifest: forget its chunks.
    func dropSubmissions(of connection: Int) {
        let prefix = "\(connection) "
        for key in submissions.keys where key.hasPrefix(prefix) { submissions[key] = nil }
    }

    // MARK: batch list, batch show

    func batchList(reply: @escaping Reply) {
        let token = later(reply)
        stored({ store in try store.batchRecords().map { ($0, try store.batchTotals($0.id)) } }) { scheduler, result in
            switch result {
            case .success(let rows):
                scheduler.respond(token, ControlResponse(batches: rows.map { scheduler.summary($0.0, $0.1) }))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot read batches: \(error)")))
            }
        }
    }

    func batchShow(_ request: ControlRequest, reply: @escaping Reply) {
        guard let id = request.batch else { return reply(.failure(ControlError(.badRequest, "batch show needs a batch id"))) }
        let token = later(reply)
        stored({ store in
            try store.batchRecord(id).map { ($0, try store.batchTotals(id), try store.hookRuns(batch: id)) }
        }) { scheduler, result in
            switch result {
            case .success(.some(let (record, totals, hookRuns))):
                scheduler.respond(token, ControlResponse(batches: [scheduler.summary(record, totals)], hookRuns: hookRuns))
            case .success(.none):
                scheduler.respond(token, .failure(ControlError(.unknownBatch, "no batch \(id)")))
            case .failure(let error):
                scheduler.respond(token, .failure(ControlError(.internal, "cannot read batch \(id): \(error)")))
            }
        }
    }

    /// The stored totals with the live bytes and rates of the batch's running jobs.
    private func summary(_ record: BatchRecord,
                         _ totals: (counts: [JobState: Int], bytesDone: Int64, bytesTotal: Int64?)) -> Batch {
        var bytesDone = totals.bytesDone
        var rate: Int64 = 0
        for scheduled in running.values where scheduled.job.batch == record.id {
            bytesDone = bytesDone.saturatingAdd(max(0, scheduled.live.bytesDone.saturatingSubtract(scheduled.job.bytesDone)))
            rate = rate.saturatingAdd(scheduled.rate)
        }
        return Batch(record: record, counts: totals.counts, bytesDone: bytesDone, bytesTotal: totals.bytesTotal,
                     rate: rate)
    }

    // MARK: The end of a batch

    /// The batch's last unfinished job has ended (and is recorded): announce it and run its hook,
    /// which is recorded as due together with the state it was decided on.
    func batchEnded(_ id: Int64, announce: Bool = true) {
        stored({ store -> (BatchRecord, BatchState, PendingHook?)? in
            guard let record = try store.batchRecord(id) else { return nil }
            let totals = try store.batchTotals(id)
            let state = BatchState.derive(totals.counts)
            guard state.hasEnded else { return nil }  // a job was added meanwhile
            let hook = PendingHook.forBatch(record, state: state, counts: totals.counts)
            if let hook { try store.addPendingHook(hook) }
            return (record, state, hook)
        }) { scheduler, result in
            guard case .success(.some(let (record, state, hook))) = result else { return }
            if announce {
                var event = TransferEvent(.batchEnded)
                event.batch = id
                event.batchState = state
                scheduler.events.publish(event)
                scheduler.logger.info("batch \(id) (\(record.name)) ended \(state.rawValue)")
            }
            if let hook { scheduler.enqueue(hook) }
        }
    }
}
