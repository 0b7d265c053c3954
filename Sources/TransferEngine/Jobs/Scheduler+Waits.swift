/// Waits: answered once every job waited for has ended (and that end is recorded).
extension Scheduler {
    /// Waits for the selected jobs; `owner` is whose wait it is, for `stopWaiting(owner:)`.
    /// A batch's ended jobs count too: the caller sees whether all of them completed.
    func wait(for selection: JobSelection, owner: Int, done: @escaping (Result<[Job], CommandRefusal>) -> Void) {
        let ids: [JobID]
        switch selection {
        case .batch(let batch):
            return read({ store in
                guard try store.batchRecord(batch) != nil else { throw CommandRefusal.unknownBatch(batch) }
                return try store.jobs(batch: batch, limit: Int.max)
            }) { [unowned self] result in
                switch result {
                case .success(let jobs):
                    wait(for: jobs.map(\.id), loaded: jobs.map { ($0.id, $0) }, owner: owner) { done(.success($0)) }
                case .failure(let refusal as CommandRefusal):
                    done(.failure(refusal))
                case .failure(let error):
                    done(.failure(.store("\(error)")))
                }
            }
        case .all: ids = jobs.values.map(\.id)
        case .ids(let named): ids = named
        }
        let missing = ids.filter { jobs[$0] == nil }
        read({ store in try missing.map { id in (id, try store.job(id)) } }) { [unowned self] result in
            let loaded = (try? result.get()) ?? []
            if let unknown = loaded.first(where: { $0.1 == nil }) {
                return done(.failure(.unknownJob(unknown.0)))
            }
            wait(for: ids, loaded: loaded, owner: owner) { done(.success($0)) }
        }
    }

    /// Answers once every job of `ids` has ended; `loaded` are the jobs read from the store.
    private func wait(for ids: [JobID], loaded: [(JobID, Job?)], owner: Int, done: @escaping ([Job]) -> Void) {
        var waiter = Waiter(owner: owner, remaining: Set(ids), ended: [], done: done)
        for case let (id, job?) in loaded where job.state.hasEnded && jobs[id] == nil {
            waiter.remaining.remove(id)
            waiter.ended.append(job)
        }
        if waiter.remaining.isEmpty {
            done(waiter.ended)
        } else {
            waiters.append(waiter)
        }
    }

    /// A job reached completed, failed or cancelled (and that is recorded): end its batch when
    /// it was the last, and wake its waiters.
    func jobEnded(_ job: Job) {
        if let batch = job.batch, batches.endRecorded(batch: batch) {
            collectionMaker.forget(batch: batch)
            batchEnded(batch)
        }
        // In place: a waiter of thousands of jobs must not be copied at every end.
        var index = waiters.startIndex
        while index < waiters.endIndex {
            if waiters[index].remaining.remove(job.id) != nil { waiters[index].ended.append(job) }
            if waiters[index].remaining.isEmpty {
                let waiter = waiters.remove(at: index)
                waiter.done(waiter.ended)
            } else {
                index += 1
            }
        }
    }

    /// Whoever waited went away: forget what it was waiting for.
    func stopWaiting(owner: Int) {
        waiters.removeAll { $0.owner == owner }
    }
}
