/// Waits: answered by the core once every job waited for has ended (and that end is recorded).
extension Scheduler {
    /// Waits for the selected jobs; `owner` is whose wait it is, for `stopWaiting(owner:)`.
    /// A batch's ended jobs count too: the caller sees whether all of them completed.
    func wait(for selection: JobSelection, owner: Int, done: @escaping (Result<[Job], CommandRefusal>) -> Void) {
        let ids: [JobID]
        switch selection {
        case .batch(let batch):
            return read({ store in
                guard try store.batchRecord(batch) != nil else { throw CommandRefusal.unknownBatch(batch) }
                return try store.batchForWait(batch)
            }) { [unowned self] result in
                switch result {
                case .success(let (ids, ended)):
                    wait(for: Set(ids), ended: ended, owner: owner) { done(.success($0)) }
                case .failure(let refusal as CommandRefusal):
                    done(.failure(refusal))
                case .failure(let error):
                    done(.failure(.store("\(error)")))
                }
            }
        case .all: ids = core.jobs.values.filter { !$0.job.state.hasEnded }.map(\.id)
        case .ids(let named): ids = named
        }
        let missing = ids.filter(readsFromStore)
        read({ store in try missing.map { id in (id, try store.job(id)) } }) { [unowned self] result in
            let loaded = (try? result.get()) ?? []
            if let unknown = loaded.first(where: { $0.1 == nil }) {
                return done(.failure(.unknownJob(unknown.0)))
            }
            wait(for: Set(ids), ended: loaded.compactMap(\.1), owner: owner) { done(.success($0)) }
        }
    }

    /// Hands the wait to the core; `ended` are jobs the store had seen end.
    private func wait(for ids: Set<JobID>, ended: [Job], owner: Int, done: @escaping ([Job]) -> Void) {
        let token = nextAnswerToken()
        answers[token] = done
        feed(.wait(token: token, owner: owner, ids: ids, ended: ended))
    }

    /// Whether a request about `id` reads it from the store: a job not in memory, or one
    /// finishing its file. The finishing group records that one's completion itself, perhaps
    /// before a read queued now, while the loop hears of it only after that read's answer (the
    /// store answers in its order): by the answer the job may have left memory, ended.
    func readsFromStore(_ id: JobID) -> Bool {
        guard let record = core.jobs[id] else { return true }
        if case .finalizing = record.phase { return true }
        return false
    }

    /// Whoever waited went away: forget what it was waiting for.
    func stopWaiting(owner: Int) {
        feed(.waitsDropped(owner: owner))
    }
}
