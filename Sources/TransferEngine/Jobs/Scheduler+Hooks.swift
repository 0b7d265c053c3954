/// Completion hooks (`--on-complete`, `--on-fail`): run off the loop thread, a few at a time,
/// each with a timeout; how each ended is recorded and published.
extension Scheduler {
    /// Hooks running at once; the rest wait in order.
    static let maxHooks = 4

    /// Runs the job's hook for the state it ended in, if it has one.
    func runHooks(of job: Job) {
        let event: String
        let command: String?
        switch job.state {
        case .completed: (event, command) = ("complete", job.onComplete)
        case .failed: (event, command) = ("fail", job.onFail)
        default: return
        }
        guard let command else { return }
        var environment = [
            "TRANSFERD_EVENT": event, "TRANSFERD_JOB_ID": job.id.description, "TRANSFERD_STATE": job.state.rawValue,
            "TRANSFERD_KIND": job.kind.rawValue, "TRANSFERD_URL": job.displayURL, "TRANSFERD_PATH": job.path ?? "",
            "TRANSFERD_BYTES": String(job.bytesDone),
        ]
        if let batch = job.batch { environment["TRANSFERD_BATCH_ID"] = String(batch) }
        if let status = job.httpStatus { environment["TRANSFERD_HTTP_STATUS"] = String(status) }
        if let error = job.error {
            environment["TRANSFERD_ERROR_CODE"] = error.code
            environment["TRANSFERD_ERROR"] = error.message
        }
        enqueue(PendingHook(job: job.id, batch: job.batch, event: event,
                            command: HookCommand(command: command, environment: environment,
                                                 timeoutMilliseconds: configuration.hookTimeoutMilliseconds)))
    }

    /// Runs the batch's hook for the state it ended in: `completed` (or nothing left to do) runs
    /// `--on-complete`, `failed` runs `--on-fail`.
    func runHooks(of batch: BatchRecord, state: BatchState, counts: [JobState: Int]) {
        let event: String
        let command: String?
        switch state {
        case .completed, .empty: (event, command) = ("complete", batch.onComplete)
        case .failed: (event, command) = ("fail", batch.onFail)
        default: return
        }
        guard let command else { return }
        var environment = [
            "TRANSFERD_EVENT": event, "TRANSFERD_BATCH_ID": String(batch.id), "TRANSFERD_BATCH_NAME": batch.name,
            "TRANSFERD_STATE": state.rawValue,
            "TRANSFERD_JOBS_COMPLETED": String(counts[.completed] ?? 0),
            "TRANSFERD_JOBS_FAILED": String(counts[.failed] ?? 0),
            "TRANSFERD_JOBS_CANCELLED": String(counts[.cancelled] ?? 0),
        ]
        if let backup = batch.backup {
            environment["TRANSFERD_PATH"] = backup.directory
            environment["TRANSFERD_URL"] = HeaderRedaction.url(backup.prefix)
        }
        enqueue(PendingHook(job: nil, batch: batch.id, event: event,
                            command: HookCommand(command: command, environment: environment,
                                                 timeoutMilliseconds: configuration.hookTimeoutMilliseconds)))
    }

    private func enqueue(_ hook: PendingHook) {
        pendingHooks.append(hook)
        startHooks()
    }

    private func startHooks() {
        while hooksRunning < Self.maxHooks, !pendingHooks.isEmpty {
            let hook = pendingHooks.removeFirst()
            hooksRunning += 1
            let inbox = inbox!
            let started = Timestamp.now
            hookThreads.async {
                let result = HookRunner.run(hook.command)
                inbox.post { $0.hookFinished(hook, started: started, result) }
            }
        }
    }

    private func hookFinished(_ hook: PendingHook, started: Timestamp, _ result: HookResult) {
        hooksRunning -= 1
        let owner = hook.job.map { "job \($0)" } ?? hook.batch.map { "batch \($0)" } ?? "hook"
        let line = "\(owner): --on-\(hook.event) '\(hook.command.command)': \(result.summary)"
        if result.succeeded { logger.info(line) } else { logger.warn(line) }
        var event = TransferEvent(.hook, job: hook.job)
        event.batch = hook.batch
        event.reason = "on-\(hook.event): \(result.summary)"
        events.publish(event)
        let run = HookRun(job: hook.job, batch: hook.batch, event: hook.event, command: hook.command.command,
                          startedAt: started, result: result)
        stored({ store in try store.recordHookRun(run) }) { scheduler, outcome in
            if case .failure(let error) = outcome { scheduler.logger.error("\(owner): cannot record the hook run: \(error)") }
        }
        startHooks()
    }
}
