/// Pruning history (`prune`, `--keep-history`): ended jobs deleted chunk by chunk, each chunk
/// found and deleted on the store's queue in transactions of its own, never on this thread.
extension Scheduler {
    /// Jobs deleted per transaction: a prune of a million holds the store for one chunk at a
    /// time (about 0.1 s), and other records go between chunks.
    static let pruneChunk = 10_000
    /// `--keep-history`: how often the daemon prunes by itself after its start.
    static let historyIntervalMilliseconds: UInt64 = 3_600_000

    /// Deletes the ended jobs `criteria` selects, old enough at this moment, with everything
    /// that belongs to them; `done` gets how many went. `why` says who asked, for the log and
    /// the `pruned` event. An unknown batch is refused.
    func prune(_ criteria: PruneCriteria, why: String, done: @escaping (Result<Int, CommandRefusal>) -> Void) {
        let cutoff = criteria.cutoff(now: now)
        // What went is announced even when a later chunk failed; the answer is then the failure.
        let finish = { [unowned self] (pruned: PruneOutcome, failure: CommandRefusal?) in
            announce(pruned, criteria: criteria, why: why)
            done(failure.map { .failure($0) } ?? .success(pruned.jobs))
        }
        guard let batch = criteria.batch else {
            return pruneChunk(criteria, cutoff: cutoff, after: PruneCursor(), total: PruneOutcome(), done: finish)
        }
        read({ store in try store.batchRecord(batch) != nil }) { [unowned self] result in
            switch result {
            case .success(true): pruneChunk(criteria, cutoff: cutoff, after: PruneCursor(), total: PruneOutcome(), done: finish)
            case .success(false): finish(PruneOutcome(), .unknownBatch(batch))
            case .failure(let error): finish(PruneOutcome(), .store("\(error)"))
            }
        }
    }

    /// Finds the next chunk on the store's queue, lets the core keep what it holds, and goes on
    /// once the rest is deleted (`deleted`), until the store finds no more.
    private func pruneChunk(_ criteria: PruneCriteria, cutoff: Timestamp?, after cursor: PruneCursor, total: PruneOutcome,
                            done: @escaping (PruneOutcome, CommandRefusal?) -> Void) {
        let limit = Self.pruneChunk
        read({ store in try store.pruneCandidates(criteria, cutoff: cutoff, after: cursor, limit: limit) }) { [unowned self] result in
            let (candidates, next): ([PruneCandidate], PruneCursor?)
            switch result {
            case .success(let found): (candidates, next) = found
            case .failure(let error): return done(total, .store("\(error)"))
            }
            let token = nextAnswerToken()
            pruneDeletions[token] = { [unowned self] deleted in
                var sum = total
                switch deleted {
                case .success(let counts):
                    sum.jobs += counts.jobs
                    sum.batches += counts.batches
                case .failure(let error):
                    return done(sum, .store("\(error)\(sum.jobs > 0 ? " (after pruning \(sum.jobs) jobs)" : "")"))
                }
                // A daemon that is stopping starts no more chunks: the next prune goes on from here.
                guard let next, !core.stopping else { return done(sum, nil) }
                pruneChunk(criteria, cutoff: cutoff, after: next, total: sum, done: done)
            }
            feed(.prunable(token: token, candidates))
        }
    }

    /// The `prune` action: deletes the chunk's jobs on the store's queue in a transaction of
    /// their own (`StoreQueue.alone`: after everything asked of the store before), then tells the
    /// core and the prune that asked.
    func deletePruned(_ token: Int, _ candidates: [PruneCandidate]) {
        loop.assertOnLoopThread()
        let inbox = inbox!
        store.alone({ store in try store.deletePruned(candidates) }) { result in
            inbox.post { scheduler in
                scheduler.feed(.pruned(token: token))
                scheduler.pruneDeletions.removeValue(forKey: token)?(result.map { PruneOutcome(jobs: $0.jobs, batches: $0.batches) })
            }
        }
    }

    /// Logs and publishes a prune that deleted anything.
    private func announce(_ pruned: PruneOutcome, criteria: PruneCriteria, why: String) {
        guard pruned.jobs > 0 else { return logger.debug("\(why): nothing to prune") }
        let batches = pruned.batches > 0 ? " and \(pruned.batches) batches left without jobs" : ""
        logger.info("pruned \(pruned.jobs) jobs\(batches) (\(why))")
        var event = TransferEvent(.pruned)
        event.count = pruned.jobs
        event.batch = criteria.batch
        event.reason = why
        events.publish(event)
    }

    // MARK: --keep-history

    /// `--keep-history`: prunes what ended longer ago at start (once the hooks that were due are
    /// taken up) and then every hour, on the store's queue; one such prune at a time.
    func startHistoryTimer() {
        guard let keep = configuration.keepHistory else { return }
        historyTimer = UVTimer(loop: loop) { [unowned self] in pruneHistory(keep) }
        historyTimer?.start(after: 0, repeat: Self.historyIntervalMilliseconds)
    }

    private func pruneHistory(_ keep: Age) {
        guard !historyPruning, !core.stopping, let criteria = try? PruneCriteria(olderThan: keep) else { return }
        historyPruning = true
        prune(criteria, why: "--keep-history \(keep)") { [unowned self] result in
            historyPruning = false
            if case .failure(let refusal) = result { logger.error("--keep-history: cannot prune: \(refusal.message)") }
        }
    }
}

/// What a prune deleted so far.
struct PruneOutcome: Equatable, Sendable {
    var jobs = 0
    var batches = 0
}
