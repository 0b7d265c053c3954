/// Completion hooks (`--on-complete`, `--on-fail`): run off the loop thread, a few at a time,
/// each with a timeout; how each ended is recorded and published.
extension Scheduler {
    /// Hooks running at once; the rest wait in order.
    static let maxHooks = 4

    /// Runs the hooks that were due when the daemon stopped, and looks again at batches that
    /// ended just before it stopped.
    func resumeHooks() {
        stored({ store in (try store.pendingHooks(), try store.batchesAwaitingHooks()) }) { scheduler, result in
            switch result {
            case .success(let (hooks, batches)):
                for hook in hooks {
                    scheduler.logger.info("\(hook.owner): running --on-\(hook.event), due when transferd stopped")
                    scheduler.enqueue(hook)
                }
                for batch in batches { scheduler.batchEnded(batch, announce: false) }
            case .failure(let error):
                scheduler.logger.error("cannot read the hooks that are due: \(error)")
            }
        }
    }

    /// Runs a due hook (already recorded as pending) when a runner is free.
    func enqueue(_ hook: PendingHook) {
        pendingHooks.append(hook)
        startHooks()
    }

    private func startHooks() {
        while hooksRunning < Self.maxHooks, !pendingHooks.isEmpty {
            let hook = pendingHooks.removeFirst()
            hooksRunning += 1
            let inbox = inbox!
            let started = now
            let command = HookCommand(command: hook.command, environment: hook.environment,
                                      timeoutMilliseconds: configuration.hookTimeoutMilliseconds)
            hookThreads.async {
                let result = HookRunner.run(command)
                inbox.post { $0.hookFinished(hook, started: started, result) }
            }
        }
    }

    private func hookFinished(_ hook: PendingHook, started: Timestamp, _ result: HookResult) {
        hooksRunning -= 1
        let owner = hook.owner
        let line = "\(owner): --on-\(hook.event) '\(hook.command)': \(result.summary)"
        if result.succeeded { logger.info(line) } else { logger.warn(line) }
        var event = TransferEvent(.hook, job: hook.job)
        event.batch = hook.batch
        event.reason = "on-\(hook.event): \(result.summary)"
        events.publish(event)
        let run = HookRun(job: hook.job, batch: hook.batch, event: hook.event, command: hook.command,
                          startedAt: started, result: result)
        let key = hook.key
        stored({ store in try store.finishHook(key, run) }) { scheduler, outcome in
            if case .failure(let error) = outcome { scheduler.logger.error("\(owner): cannot record the hook run: \(error)") }
        }
        startHooks()
    }
}
