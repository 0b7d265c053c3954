/// What follows a record reaching the store (events, batch ends, waiters, hooks, answers), the
/// retry timer, jobs waiting for their host, and the hooks' runners.
extension SchedulerCore {
    // MARK: Recorded

    /// The store recorded a change (or could not): it is published, and an end wakes what
    /// waited for it. A command is acknowledged only once recorded: a store that could not
    /// record it (a full disk) makes the answer an error, and the command may be given again.
    mutating func recorded(_ token: Int, error: String?) {
        guard let done = unrecorded.removeValue(forKey: token) else { return }
        if let error { log(.error, "job \(done.id): cannot record \(done.event.state?.rawValue ?? "the change"): \(error)") }
        appendAction(.publish(done.event))
        for event in done.then { appendAction(.publish(event)) }
        if let record = jobs[done.id], record.startToken == token {
            jobs[done.id]?.startToken = nil
            // A download transfers while its start is recorded: one that cannot be recorded fails.
            if let error, record.phase == .attempt {
                stop(done.id, .fail(.io(path: record.job.path ?? "", operation: "record the attempt: \(error)", errno: 0)))
            }
        }
        if let ended = done.ended {
            if ending[done.id]?.token == token {
                ending[done.id] = nil
                appendAction(.endRecorded(done.id))
            }
            if let batch = ended.batch, batches.endRecorded(batch: batch) { appendAction(.batchEnded(batch, announce: true)) }
            wakeWaiters(ended)
        }
        if let hook = done.hook, error == nil { enqueue(hook) }
        for ack in done.acks {
            if let error {
                refuse(ack, .notRecorded(ack.command, done.id, error))
            } else if let job = job(done.id) ?? done.ended {
                appendAction(.acknowledge(ack.token, .success(job)))
            }
        }
        if stopping, stillRunning.contains(done.id), job(done.id)?.state != .running {
            stillRunning.remove(done.id)
            if stillRunning.isEmpty { appendAction(.shutdownComplete) }
        }
    }

    // MARK: Retry timer

    /// Sets the retry timer for the earliest waiting job (stale entries dropped on the way).
    mutating func armRetryTimer(now: Timestamp) {
        while let first = retryQueue.first, !isDue(first) { retryQueue.pop() }
        appendAction(.armRetryTimer(retryQueue.first?.due))
    }

    mutating func retryDue(now: Timestamp) {
        while let first = retryQueue.first, first.due <= now {
            retryQueue.pop()
            if isDue(first) { transition(first.id, StateChange(.queued, reason: "retrying"), now: now) }
        }
        armRetryTimer(now: now)
    }

    /// The entry still stands for a job waiting until that time.
    private func isDue(_ entry: RetryEntry) -> Bool {
        guard let job = jobs[entry.id]?.job else { return false }
        return job.state == .waiting && job.nextAttemptAt == entry.due
    }

    // MARK: Offline

    /// Makes a waiting job wait for its host, which is probed until it answers (one probe per
    /// host and route: through a proxy, or with -4, a host may answer one job and not another).
    mutating func waitForHost(_ record: JobRecord) {
        if hostWaits[record.route] == nil {
            appendAction(.probe(jobURL: record.job.serverURL, route: record.job.network.route))
        }
        hostWaits[record.route, default: []].insert(record.id)
    }

    mutating func forgetHostWait(_ id: JobID, host: String) {
        guard hostWaits[host]?.remove(id) != nil else { return }
        if hostWaits[host]?.isEmpty == true { hostWaits[host] = nil }
    }

    /// The host answers: its waiting jobs go back in the queue.
    mutating func hostAnswered(_ host: String, now: Timestamp) {
        let ids = hostWaits.removeValue(forKey: host) ?? []
        log(.info, "\(host) answers again: \(ids.count) waiting jobs go back in the queue")
        for id in ids.sorted() where jobs[id]?.job.state == .waiting {
            transition(id, StateChange(.queued, reason: "\(host) answers again"), now: now)
        }
    }

    // MARK: Hooks

    /// Runs a due hook (already recorded as pending) when a runner is free.
    mutating func enqueue(_ hook: PendingHook) {
        hookQueue.append(hook)
        startHooks()
    }

    mutating func startHooks() {
        while hooksRunning < settings.maxHooks, !hookQueue.isEmpty {
            hooksRunning += 1
            appendAction(.runHook(hookQueue.removeFirst()))
        }
    }
}
