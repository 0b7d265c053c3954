/// What the decision core asks the shell to do: record, start, stop, finalize, publish, probe,
/// arm the retry timer, run a hook, answer. Values only; the shell performs them in order.
enum SchedulerAction {
    /// Record a state change with what goes with it (`StateRecord`); report `recorded` with its token.
    case record(StateRecord)
    /// Record the attempt (with `running`, as `record`) and prepare its file or body on the
    /// store's queue, then start it.
    case startAttempt(StateRecord, attempt: Int)
    /// Take the job's transfer off the engine; report `stopped` once it is idle.
    case stop(JobID)
    /// Sync, verify and rename the finished file off the loop; report `finalized`. `completion`:
    /// the job's record should it complete, written with the rename (see `RecordedCompletion`).
    case finalize(JobID, AttemptReport, completion: StateRecord?)
    case publish(TransferEvent)
    /// Probe the host of this job URL the job's way (`NetworkOptions.route`: its proxy, IP
    /// version, addresses) until it answers (one probe per host and route); report `hostAnswered`.
    case probe(jobURL: String, route: NetworkOptions)
    /// Set the retry timer for this time, or stop it.
    case armRetryTimer(Timestamp?)
    /// Claim a failed download's destination again in the store; report `destinationClaimed`.
    case claimDestination(JobID, path: String)
    case runHook(PendingHook)
    /// Judge the batch's end from the store (every end of its jobs is recorded) and run its hook;
    /// `announce`: publish it (not for a batch that ended before the daemon stopped).
    case batchEnded(Int64, announce: Bool)
    /// The end of this job is recorded (work waiting for it, like a `show`, may run).
    case endRecorded(JobID)
    /// Delete these ended jobs (none of which the core holds) from the store; report `pruned`.
    case prune(token: Int, [PruneCandidate])
    /// Answer a `wait`.
    case answer(token: Int, [Job])
    /// Answer a command (or the shutdown): the job as it is now, or why not.
    case acknowledge(Int, Result<Job, CommandRefusal>)
    case log(Logger.Level, String)
    /// Every job that was running when `shutdown` came is recorded as stopped.
    case shutdownComplete
}

/// A state change and everything recorded in the same transaction.
struct StateRecord: Sendable {
    var token: Int
    var id: JobID
    var change: StateChange
    /// The time the change is recorded with (the core's clock).
    var at: Timestamp
    /// What happens to the partial file before the record: its bytes made durable, or removed
    /// (a cancel or a discarded body frees space even when the store cannot record it yet).
    var partial = PartialFileStep.none
    var resume: ResumeStep = .none
    var attempt: AttemptEnd?
    var response: UploadResponse?
    var refusal: (attempt: Int, RetryRefusal)?
    var backupUploaded = false
    /// A cancelled resumable upload: once recorded, its server is told to discard what it holds.
    var discardsUpload = false
    /// A hook the end makes due: recorded with it, so it runs even if the daemon stops first.
    var hook: PendingHook?
    /// A client waits for this record: a command's answer, or a `wait` whose last job this end
    /// is. Committed at once instead of gathering with the records no one waits for.
    var awaited = false
    /// The start of the job's attempt, held on the loop until this record (`Scheduler+HeldStarts`):
    /// written first, in the same transaction.
    var heldStart: HeldStart?

    enum PartialFileStep: Equatable, Sendable {
        case none, sync
        case remove(String)
    }

    enum ResumeStep: Equatable, Sendable {
        case none
        case save(ResumeState)
        case delete
    }
}

/// A download's completion as its finishing group recorded it: `SchedulerAction.finalize`'s
/// record, written in one transaction with the others of its group once their renames are
/// durable, stamped with the time it was written (`error`: why it could not be). The core
/// applies it as recorded: no record action and no answer from the store's queue of its own.
struct RecordedCompletion: Sendable {
    var record: StateRecord
    var error: String?
}

extension StateRecord {
    /// Writes the change and what goes with it in one transaction, at the core's time. Never
    /// inlined: `bench/instructions.sh` counts the state changes recorded by this name.
    @inline(never)
    func write(to store: JobStore) throws {
        try store.transaction {
            // A start held until this end is written with it: its number and time in the same
            // rewrite of the job's row, its attempt's row made with the end (`folded`).
            let folded = heldStart.map { $0.number == attempt?.number } ?? false
            if let heldStart, !folded { try heldStart.write(to: store) }
            try store.setState(id, change, now: at, attempt: folded ? heldStart?.number : nil,
                               startedAt: folded ? heldStart?.at : nil)
            switch resume {
            case .none: break
            case .save(let state): try store.saveResume(id, state)
            case .delete: try store.deleteResume(id)
            }
            if let response { try store.saveResponse(id, response) }
            if let attempt {
                try store.finishAttempt(id, number: attempt.number, httpStatus: attempt.status, error: attempt.error,
                                        bytes: attempt.bytes, metrics: attempt.metrics, now: at,
                                        startedAt: folded ? heldStart?.at : nil)
            }
            if let (number, refusal) = refusal { try store.recordRefusal(id, number: number, refusal) }
            if backupUploaded { try store.markBackupUploaded(id) }
            if let hook { try store.addPendingHook(hook) }
        }
    }
}
