/// One thing that happened in the daemon, as `transferctl events` and `watch` see it. Every
/// event has `type` and `time`, and `job` when it concerns one. Thread: a value; any.
public struct TransferEvent: Codable, Equatable, Sendable {
    /// The stored and printed words: never rename them.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case jobCreated = "job_created"
        /// `modify` changed a job (`reason`: what).
        case jobModified = "job_modified"
        case state
        case attemptStarted = "attempt_started"
        case attemptFinished = "attempt_finished"
        case progress
        case retryScheduled = "retry_scheduled"
        case limitChanged = "limit_changed"
        /// A batch was created (`batch`, `reason`: its name), or its last unfinished job ended
        /// (`batch`, `batchState`).
        case batchCreated = "batch_created"
        case batchEnded = "batch_ended"
        /// An `--on-complete`/`--on-fail` command ran (`job` or `batch`; `reason`: how it ended).
        case hook
        /// Ended jobs were deleted (`count`; `batch` for a prune of one batch; `reason`: who asked).
        case pruned
    }

    public var type: Kind
    public var time: Timestamp
    public var job: JobID?
    /// `state`: the new state, the one before, and why.
    public var state: JobState?
    public var from: JobState?
    public var reason: String?
    /// `progress`, `attempt_finished`, `job_created`.
    public var bytesDone: Int64?
    public var bytesTotal: Int64?
    /// `progress`: bytes per second over the last interval.
    public var rate: Int64?
    /// `attempt_started`, `attempt_finished`, `retry_scheduled`.
    public var attempt: Int?
    public var httpStatus: Int?
    public var error: JobError?
    public var metrics: AttemptMetrics?
    /// `retry_scheduled`: when the next attempt is due.
    public var nextAttemptAt: Timestamp?
    /// `limit_changed`: the global limits now in force, or a job's new limit (`job` set).
    public var limits: DaemonStats.Rates?
    public var limit: Int64?
    /// `batch_created`, `batch_ended`, `hook`: the batch concerned, and the state it ended in;
    /// on an event about a job, the job's batch.
    public var batch: Int64?
    public var batchState: BatchState?
    /// `pruned`: how many jobs.
    public var count: Int?

    public init(_ type: Kind, job: JobID? = nil, time: Timestamp = .now) {
        self.type = type
        self.job = job
        self.time = time
    }

    /// An event about `job`, carrying its batch.
    init(_ type: Kind, of job: Job, time: Timestamp = .now) {
        self.init(type, job: job.id, time: time)
        batch = job.batch
    }
}
