/// The operations users ask of jobs, with typed results: queue one, read them, pause, resume,
/// cancel or retry them, wait for them. What a request says and what its reply looks like is
/// the command service's (Control/); each `done` here runs on the loop thread, once.
extension Scheduler {
    // MARK: Reading the store

    /// Runs `work` on the store's queue, then `done` on the loop thread. Unlike `stored`, `done`
    /// may capture anything the loop owns (it stays here, found again by token).
    func read<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T,
                           done: @escaping (Result<T, any Error>) -> Void) {
        let token = nextAnswerToken()
        let handoff = Handoff<T>()
        pendingReads[token] = { done(handoff.result!) }
        stored(work) { scheduler, result in
            handoff.result = result
            scheduler.pendingReads.removeValue(forKey: token)?()
        }
    }

    // MARK: add, list, show, stats, resume-data

    /// Validates and records a new job, then takes it over: answered once it is queued.
    func queue(_ new: NewJob, done: @escaping (Result<Job, CommandRefusal>) -> Void) {
        do {
            try JobValidation.validate(new)
        } catch {
            return done(.failure(.refused(error)))
        }
        let retries = configuration.defaultRetries
        read({ store in
            if let batch = new.batch, try store.batchRecord(batch) == nil { throw JobRefusal.unknownBatch(batch) }
            return try store.queue(new, defaultRetries: retries)
        }) { [unowned self] result in
            switch result {
            case .success(let job):
                logger.info("job \(job.id): queued \(job.kind.rawValue) \(job.displayURL) \(job.kind == .download ? "->" : "<-") \(job.path ?? "form")")
                if job.tls.insecure {
                    logger.warn("job \(job.id): TLS verification is off for \(job.displayURL) (--insecure)")
                }
                adopt([job])
                done(.success(current(job)))
            case .failure(let error as JobRefusal):
                done(.failure(.refused(error)))
            case .failure(let error as DestinationRefusal):
                done(.failure(.refused(.destination(error))))
            case .failure(let error):
                done(.failure(.store("\(error)")))
            }
        }
    }

    /// A page of jobs as the loop knows them now.
    func jobs(state: JobState?, batch: Int64?, before: JobID?, limit: Int,
              done: @escaping (Result<[Job], CommandRefusal>) -> Void) {
        read({ store in
            // docs/batches.md: an unknown batch (one never made, or pruned) is refused.
            if let batch, try store.batchRecord(batch) == nil { throw CommandRefusal.unknownBatch(batch) }
            return try store.jobs(state: state, batch: batch, before: before, limit: limit)
        }) { [unowned self] result in
            switch result {
            case .success(let jobs):
                // The store's state filter saw its snapshot; keep only jobs still in it.
                let page = jobs.map(current).filter { state == nil || $0.state == state }
                done(.success(state == .running ? listingHeldStarts(page, batch: batch, before: before, limit: limit) : page))
            case .failure(let refusal as CommandRefusal):
                done(.failure(refusal))
            case .failure(let error):
                done(.failure(.store("\(error)")))
            }
        }
    }

    /// One job with its attempts, its upload's answer and its hooks, all from one record.
    func details(of id: JobID, done: @escaping (Result<JobDetails, CommandRefusal>) -> Void) {
        read({ store in
            try store.job(id).map {
                ($0, try store.attempts(id), try store.response(id), try store.hookRuns(job: id), try store.uploadSession(id)?.session)
            }
        }) { [unowned self] result in
            if core.ending[id] != nil {
                // It ended in memory after (or before) this read: answer from the record of its end.
                whenEndRecorded[id, default: []].append { [unowned self] in details(of: id, done: done) }
                return
            }
            switch result {
            case .success(.some(let (job, attempts, response, hookRuns, session))):
                done(.success(JobDetails(job: current(job), attempts: attempts, response: response, hookRuns: hookRuns,
                                         session: session)))
            case .success(.none):
                done(.failure(.unknownJob(id)))
            case .failure(let error):
                done(.failure(.store("\(error)")))
            }
        }
    }

    /// How many jobs the store has in each state.
    func counts(done: @escaping (Result<[JobState: Int], CommandRefusal>) -> Void) {
        read({ store in try store.countsByState() }) { [unowned self] result in
            done(result.map { countingHeldStarts($0) }.mapError { .store("\($0)") })
        }
    }

    /// What another daemon needs to continue the download where this one stopped.
    func resumeData(of id: JobID, done: @escaping (Result<ResumeData, CommandRefusal>) -> Void) {
        read({ store in (try store.job(id), try store.resumeState(id)) }) { [unowned self] result in
            switch result {
            case .success((.some(let job), .some(let state))): done(.success(ResumeData(job: job, state: state)))
            case .success((.some(let stored), .none)):
                // Started with nothing stored: nothing durable yet, and no row until there is (as
                // the loop knows it: a start may be held, `Scheduler+HeldStarts`).
                let job = current(stored)
                if job.attempts > 0, !job.state.hasEnded, let partialPath = job.partialPath {
                    return done(.success(ResumeData(job: job, state: ResumeState(partialPath: partialPath))))
                }
                done(.failure(.noResumeData(id, job.state)))
            case .success((.none, _)): done(.failure(.unknownJob(id)))
            case .failure(let error): done(.failure(.store("\(error)")))
            }
        }
    }
}

/// A store result on its way to the loop thread: written and read only there (by the store
/// work's continuation, then by `done`), but carried through a `@Sendable` closure.
private final class Handoff<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
