/// Batches: manifests queued in one transaction, batch totals, and the end of a batch.
extension Scheduler {
    // MARK: submit

    /// Keeps a chunk of a manifest that came in `bytes` of request on `connection`, and has its
    /// lines checked while the next chunks come. The final chunk's lines are checked too; once
    /// the checks of all its chunks are back, `complete` gets the whole manifest, no longer held,
    /// with what was checked of it (not if its client went away meanwhile). Returns the entries
    /// held so far.
    func stage(_ submission: BatchSubmission, bytes: Int, connection: Int,
               complete: @escaping (BatchSubmission, ManifestChecks) -> Void) throws(JobRefusal) -> Int {
        let held = staging.bytes
        let outcome: ManifestStaging.Outcome
        do {
            outcome = try staging.add(submission.entries, bytes: bytes, connection: connection,
                                      token: submission.token, final: submission.final)
        } catch {
            returnMemory(ifStagingHeld: held, tokens: [submission.token])  // the refused manifest's chunks are gone
            throw error
        }
        switch outcome {
        case .staged(let count):
            check(submission, endingAt: count, connection: connection)
            return count
        case .closing(let count):
            let answer = nextAnswerToken()
            pendingReads[answer] = { [unowned self] in
                guard let (entries, checks) = staging.close(connection: connection, token: submission.token) else { return }
                var whole = submission
                whole.entries = entries
                complete(whole, checks)
            }
            check(submission, endingAt: count, connection: connection, answer: answer)
            return count
        }
    }

    /// Checks a held chunk's lines on a file thread (a line's check may look at its
    /// destination), one chunk of a manifest after the other, and keeps what it found with the
    /// manifest; then runs the read waiting as `answer`, if any.
    private func check(_ chunk: BatchSubmission, endingAt count: Int, connection: Int, answer: Int? = nil) {
        let (entries, umask, token, inbox) = (chunk.entries, chunk.umask, chunk.token, inbox!)
        let retries = staging.preparesRows ? configuration.defaultRetries : nil
        fileThreads.async(key: token) {
            let checks = ManifestChecks.check(entries, from: count - entries.count, umask: umask, defaultRetries: retries)
            inbox.post { scheduler in
                scheduler.staging.checked(checks, connection: connection, token: token)
                if let answer { scheduler.pendingReads.removeValue(forKey: answer)?() }
            }
        }
    }

    /// Queues a whole manifest as one batch (all of it or none), then takes its jobs over;
    /// `checks`: what was checked of its lines while it came.
    func queue(_ whole: BatchSubmission, checks: ManifestChecks = ManifestChecks(),
               done: @escaping (Result<BatchQueueing.Outcome, CommandRefusal>) -> Void) {
        let retries = configuration.defaultRetries
        read({ store in try BatchQueueing.queue(whole, checks: checks, defaultRetries: retries, in: store) }) { [unowned self] result in
            switch result {
            case .success(let outcome):
                submitted(outcome, lines: whole.entries.count, done: done)
            case .failure(let error as JobRefusal):
                done(.failure(.refused(error)))
            case .failure(let error):
                done(.failure(.store("\(error)")))
            }
        }
    }

    /// What queueing a backup's entries would do with each file; changes nothing.
    func plan(_ submission: BatchSubmission, done: @escaping (Result<[BackupDecision], CommandRefusal>) -> Void) {
        read({ store in try BatchQueueing.plan(submission, in: store) }) { result in
            switch result {
            case .success(let decisions): done(.success(decisions))
            case .failure(let error as JobRefusal): done(.failure(.refused(error)))
            case .failure(let error): done(.failure(.store("\(error)")))
            }
        }
    }

    private func submitted(_ outcome: BatchQueueing.Outcome, lines: Int,
                           done: (Result<BatchQueueing.Outcome, CommandRefusal>) -> Void) {
        let batch = outcome.batch
        if outcome.created {
            var event = TransferEvent(.batchCreated)
            event.batch = batch.id
            event.reason = batch.name
            events.publish(event)
        }
        logger.info("batch \(batch.id) (\(batch.name)): queued \(outcome.jobs.count) jobs, skipped \(outcome.skipped)")
        adopt(outcome.jobs)
        done(.success(outcome))
        // A new batch with nothing to do (a backup of unchanged files) is done as soon as it exists.
        if outcome.created, lines > 0, outcome.jobs.isEmpty { batchEnded(batch.id) }
    }

    /// The connection went away in the middle of a manifest: forget its chunks.
    func dropSubmissions(of connection: Int) {
        let held = staging.bytes
        let tokens = staging.drop(connection: connection)
        returnMemory(ifStagingHeld: held, tokens: tokens)
    }

    /// Gives the memory of dropped chunks back to the system when they were big (the C heap
    /// would keep it for the daemon's next manifest), once the checks still queued for the
    /// manifests of `tokens` have let go of their chunks: on each token's file thread, which runs
    /// its work in order and releases each piece before the next — and off the loop, since a
    /// trim walks the whole heap.
    private func returnMemory(ifStagingHeld held: Int, tokens: [String]) {
        guard held - staging.bytes >= 1 << 20 else { return }
        for token in tokens { fileThreads.async(key: token) { Memory.returnFreed() } }
    }

    // MARK: batch list, batch show

    /// Every batch with its totals.
    func batchSummaries(done: @escaping (Result<[Batch], CommandRefusal>) -> Void) {
        read({ store in try store.batchRecords().map { ($0, try store.batchTotals($0.id)) } }) { [unowned self] result in
            done(result.map { rows in rows.map { summary($0.0, $0.1) } }.mapError { .store("\($0)") })
        }
    }

    /// One batch with its totals and the hooks that ran for it.
    func batch(_ id: Int64, done: @escaping (Result<(Batch, [HookRun]), CommandRefusal>) -> Void) {
        read({ store in
            try store.batchRecord(id).map { ($0, try store.batchTotals(id), try store.hookRuns(batch: id)) }
        }) { [unowned self] result in
            switch result {
            case .success(.some(let (record, totals, hookRuns))): done(.success((summary(record, totals), hookRuns)))
            case .success(.none): done(.failure(.unknownBatch(id)))
            case .failure(let error): done(.failure(.store("\(error)")))
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
        return Batch(record: record, counts: countingHeldStarts(totals.counts, batch: record.id), bytesDone: bytesDone,
                     bytesTotal: totals.bytesTotal, rate: rate)
    }

    // MARK: The end of a batch

    /// The batch's last unfinished job has ended (and is recorded): announce it and run its hook,
    /// which is recorded as due together with the state it was decided on.
    func batchEnded(_ id: Int64, announce: Bool = true) {
        stored({ store -> (BatchRecord, BatchState, [JobState: Int], PendingHook?)? in
            guard let record = try store.batchRecord(id) else { return nil }
            let totals = try store.batchTotals(id)
            let state = BatchState.derive(totals.counts)
            guard state.hasEnded else { return nil }  // a job was added meanwhile
            let hook = PendingHook.forBatch(record, state: state, counts: totals.counts)
            if let hook { try store.addPendingHook(hook) }
            return (record, state, totals.counts, hook)
        }) { scheduler, result in
            guard case .success(.some(let (record, state, counts, hook))) = result else { return }
            if announce {
                var event = TransferEvent(.batchEnded)
                event.batch = id
                event.batchState = state
                scheduler.events.publish(event)
                // Its jobs' completions are debug lines (`SchedulerCore.completionLevel`): this
                // line tells them.
                scheduler.logger.info("batch \(id) (\(record.name)) ended \(state.rawValue): \(Self.describe(counts))")
            }
            if let hook { scheduler.feed(.hookDue(hook)) }
        }
    }

    /// `2000 completed`, `1990 completed, 10 failed`: an ended batch's jobs by state
    /// (`JobState.describe`), or `no jobs`.
    static func describe(_ counts: [JobState: Int]) -> String {
        let text = JobState.describe(counts)
        return text.isEmpty ? "no jobs" : text
    }
}
