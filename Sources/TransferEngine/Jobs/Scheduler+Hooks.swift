/// Completion hooks (`--on-complete`, `--on-fail`): run off the loop thread, as many at once as
/// the core allows, each with a timeout; how each ended is recorded and published.
extension Scheduler {
    /// Hands the core the hooks that were due when the daemon stopped, and the batches that
    /// ended just before it stopped.
    func resumeHooks() {
        stored({ store in (try store.pendingHooks(), try store.batchesAwaitingHooks()) }) { scheduler, result in
            switch result {
            case .success(let (hooks, batches)):
                scheduler.feed(.hooksDue(hooks, batches: batches))
            case .failure(let error):
                scheduler.logger.error("cannot read the hooks that are due: \(error)")
            }
        }
    }

    /// Runs a due hook (already recorded as pending) on a hook thread.
    func run(_ hook: PendingHook) {
        let inbox = inbox!
        let started = now
        let command = HookCommand(command: hook.command, environment: hook.environment,
                                  timeoutMilliseconds: configuration.hookTimeoutMilliseconds)
        hookThreads.async {
            let result = HookRunner.run(command)
            inbox.post { $0.hookFinished(hook, started: started, result) }
        }
    }

    private func hookFinished(_ hook: PendingHook, started: Timestamp, _ result: HookResult) {
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
        feed(.hookFinished)
    }
}
