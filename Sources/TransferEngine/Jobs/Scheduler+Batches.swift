/// Batches: manifests queued in one transaction, batch totals, and the end of a batch.
extension Scheduler {
    // MARK: submit

    /// Keeps a chunk of a manifest; at the final chunk queues all of it (or none) as one batch.
    func submit(_ submission: BatchSubmission?, from origin: ControlServer.Origin, reply: @escaping Reply) {
        guard var submission else { return reply(.failure(ControlError(.badRequest, "submit needs a 'submission' object"))) }
        let held = staging.bytes
        do {
            switch try staging.add(submission.entries, bytes: origin.lineBytes, connection: origin.connection,
                                   token: submission.token, final: submission.final) {
            case .staged(let count): return reply(ControlResponse(staged: count))
            case .complete(let entries): submission.entries = entries
            }
        } catch {
            returnMemory(ifStagingHeld: held)  // the refused manifest's chunks are gone
            return reply(.failure(ControlError(error)))
        }
        let whole = submission
        let retries = configuration.defaultRetries
        let token = later(reply)
        stored({ store in try BatchQueueing.queue(whole, defaultRetries: retries, in: store) }) { scheduler, result in
            switch result {
            case .success(let outcome):
                scheduler.submitted(outcome, lines: whole.entries.count, token: token)
            case .failure(let error as JobRefusal):
                scheduler.respond(token, .failure(ControlError(error)))
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
        // A new batch with nothing to do (a backup of unchanged files) is done as soon as it exists.
        if outcome.created, lines > 0, outcome.jobs.isEmpty { batchEnded(batch.id) }
    }

    /// The client went away in the middle of a manifest: forget its chunks.
    func dropSubmissions(of connection: Int) {
        let held = staging.bytes
        staging.drop(connection: connection)
        returnMemory(ifStagingHeld: held)
    }

    /// Gives the memory of dropped chunks back to the system when they were big (the C heap
    /// would keep it for the daemon's next manifest).
    private func returnMemory(ifStagingHeld held: Int) {
        if held - staging.bytes >= 1 << 20 { Memory.returnFreed() }
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
        for (id, engineJob) in engine {
            guard let job = core.jobs[id]?.job, job.batch == record.id else { continue }
            bytesDone = bytesDone.saturatingAdd(max(0, engineJob.live(job).bytesDone.saturatingSubtract(job.bytesDone)))
            rate = rate.saturatingAdd(engineJob.rate)
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
            if let hook { scheduler.feed(.hookDue(hook)) }
        }
    }
}
