/// A job as the decision core holds it while it may still move (queued, running, waiting,
/// paused): the job itself, its retry budget, and where its attempt is. A value; the engine's
/// side of a running job (its transfer) is `EngineJob`. Thread: the loop thread (in the core).
struct JobRecord {
    /// Where a running job's attempt is; `idle` for every other state.
    enum Phase: Equatable {
        case idle
        /// Preparing its file or body, or transferring.
        case attempt
        /// Every byte is in; the file is synced, verified and renamed off the loop. A pause or
        /// cancel meanwhile (`then`) applies only if that fails: a file being renamed into
        /// place is not stopped halfway, and a job never says paused while it completes.
        case finalizing(then: StopIntent?)
        /// Its transfer is being taken off the engine; then `intent` applies.
        case stopping(StopIntent)
        /// A failed download asked to `retry` (`acks`): its destination is being claimed again.
        case claiming(acks: [CommandAck])
    }

    /// The job (its fields shared with its copies until one changes: `Job`).
    var job: Job
    var phase = Phase.idle
    /// `scheme://host:port`: what the per-host cap counts.
    private(set) var host: String
    /// The host and the job's way there (`NetworkOptions.routeKey`): what offline jobs wait on.
    private(set) var route: String
    /// `job.attempts` may not pass this without the job failing (renewed by `retry` and by an
    /// attempt that kept more bytes than ever: a job that makes progress is not failed for
    /// needing many).
    private(set) var attemptLimit: Int
    /// When the job last kept more bytes than ever (or was queued): the no-progress deadline
    /// counts from here.
    private(set) var lastProgress: Timestamp
    /// The most bytes an attempt of this download has kept: only passing it is progress.
    private var mostBytesKept: Int64
    /// A 401 or 403 already sent the job back for new credentials from `--header-command`:
    /// another one in a row fails as usual.
    var credentialsRenewed = false
    /// The token of its attempt's start while that record is on its way to the store (a download
    /// transfers meanwhile): the attempt's events wait for it, so that `running` comes first.
    var startToken: Int?

    init(job: Job, now: Timestamp) {
        self.job = job
        (host, route) = Self.host(of: job)
        attemptLimit = Self.attemptLimit(after: job)
        lastProgress = now
        mostBytesKept = job.bytesDone
    }

    var id: JobID { job.id }

    /// `modify` changed the job: its host follows its URL, its retry budget its retries.
    mutating func modified(to changed: Job, now: Timestamp) {
        let retries = changed.maxRetries != job.maxRetries
        job = changed
        (host, route) = Self.host(of: changed)
        if retries { renewRetryBudget(now: now) }
    }

    /// A full retry budget from the attempts made so far (`retry`).
    mutating func renewRetryBudget(now: Timestamp) {
        attemptLimit = Self.attemptLimit(after: job)
        lastProgress = now
    }

    /// A failed download attempt left `kept` durable bytes. Only more bytes than any attempt kept
    /// before is progress, which renews the budget: a server that keeps changing the entity
    /// makes every attempt redo the same bytes, and those attempts use the budget up.
    mutating func attemptKept(_ kept: Int64, now: Timestamp) {
        guard kept > mostBytesKept else { return }
        mostBytesKept = kept
        renewRetryBudget(now: now)
    }

    /// One more attempt that does not count against the budget (waiting for an unreachable
    /// host, or for a descriptor).
    mutating func extendRetryBudget() {
        attemptLimit = attemptLimit.saturatingAdd(1)
    }

    /// Saturating: the store's checks keep both counts small, and nothing here may trap if one slips.
    /// Its host's key and its route (its host alone for a job without network options).
    private static func host(of job: Job) -> (host: String, route: String) {
        let serverURL = job.serverURL
        let host = HostKey.key(serverURL) ?? serverURL
        let routeKey = job.network.routeKey
        return (host, routeKey.isEmpty ? host : host + routeKey)
    }

    private static func attemptLimit(after job: Job) -> Int {
        job.attempts.saturatingAdd(job.maxRetries).saturatingAdd(1)
    }
}
