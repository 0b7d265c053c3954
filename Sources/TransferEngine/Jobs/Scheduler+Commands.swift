/// Pause, resume, cancel and retry: the core moves each job as the command asks, and a command
/// is acknowledged only once recorded.
extension Scheduler {
    /// Finds the selected jobs (from memory, else from the store), then applies the command to
    /// each. Fails as a whole only for a batch that does not exist.
    func perform(_ command: JobCommand, on selection: JobSelection,
                 done: @escaping (Result<CommandOutcome, CommandRefusal>) -> Void) {
        let batch: Int64?
        switch selection {
        case .ids(let ids): return perform(command, onIDs: ids, done: done)
        case .all: batch = nil
        case .batch(let id): batch = id
        }
        guard command == .retry || command == .cancel || batch != nil else {
            let targets = jobsInMemory(batch: nil).filter { command.appliesInBulk(to: $0) }
            return apply(command, to: targets.map { .success($0) }) { done(.success($0)) }
        }
        // Failed jobs have left memory: find them in the store (and check that the batch exists).
        let findFailed = command == .retry || command == .cancel
        read({ store in
            if let batch, try store.batchRecord(batch) == nil { throw CommandRefusal.unknownBatch(batch) }
            return findFailed ? try store.jobs(state: .failed, batch: batch, limit: Int.max) : []
        }) { [unowned self] result in
            if case .failure(let refusal as CommandRefusal) = result { return done(.failure(refusal)) }
            // Not those a prune is deleting meanwhile: they are gone.
            let failed = ((try? result.get()) ?? []).filter { core.jobs[$0.id] == nil && !core.isPruning($0.id) }
            let targets = (jobsInMemory(batch: batch) + failed)
                .filter { command.appliesInBulk(to: $0) }
                .sorted { $0.id < $1.id }
            apply(command, to: targets.map { .success($0) }) { done(.success($0)) }
        }
    }

    /// The jobs in memory (of `batch`, when given), by id.
    private func jobsInMemory(batch: Int64?) -> [Job] {
        core.jobs.values.map(\.job).filter { batch == nil || $0.batch == batch }.sorted { $0.id < $1.id }
    }

    private func perform(_ command: JobCommand, onIDs ids: [JobID],
                         done: @escaping (Result<CommandOutcome, CommandRefusal>) -> Void) {
        let missing = ids.filter(readsFromStore)
        let applyToAll = { [unowned self] (found: [JobID: Job?]) in
            let targets: [Result<Job, CommandRefusal>] = ids.map { id in
                if let job = core.jobs[id]?.job { return .success(job) }
                guard let job = found[id] ?? nil else { return .failure(.unknownJob(id)) }
                return .success(job)
            }
            apply(command, to: targets) { done(.success($0)) }
        }
        // Jobs in memory (and not finishing) need nothing from the store: the command goes to
        // the core at once.
        guard !missing.isEmpty else { return applyToAll([:]) }
        read({ store in try missing.map { id in (id, try store.job(id)) } }) { result in
            let loaded = (try? result.get()) ?? []
            applyToAll(Dictionary(loaded.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// Hands the command for each target to the core; `done` once every one is answered, with
    /// the jobs changed and the refusals in the targets' order.
    private func apply(_ command: JobCommand, to targets: [Result<Job, CommandRefusal>],
                       done: @escaping (CommandOutcome) -> Void) {
        var results = [Result<Job, CommandRefusal>?](repeating: nil, count: targets.count)
        var remaining = targets.count + 1
        let finishOne = {
            remaining -= 1
            guard remaining == 0 else { return }
            var outcome = CommandOutcome(changed: [], refusals: [])
            for (index, result) in results.enumerated() {
                switch result {
                case .success(let job)?: outcome.changed.append(job)
                case .failure(.unchanged)?: if case .success(let job) = targets[index] { outcome.unchanged.append(job) }
                case .failure(let refusal)?: outcome.refusals.append(refusal)
                case nil: break
                }
            }
            done(outcome)
        }
        for (index, target) in targets.enumerated() {
            guard case .success(let job) = target else {
                results[index] = target
                finishOne()
                continue
            }
            let token = nextAnswerToken()
            acknowledgements[token] = { result in
                results[index] = result
                finishOne()
            }
            feed(.command(command, job.id, loaded: core.jobs[job.id] == nil ? job : nil, ack: token))
        }
        finishOne()
    }
}
