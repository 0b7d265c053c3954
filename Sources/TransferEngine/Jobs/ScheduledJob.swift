/// A job the scheduler holds in memory because it may still move (queued, running, waiting,
/// paused), with what runs it. Thread: the loop thread.
final class ScheduledJob {
    var job: Job
    /// The attempt in progress, from the moment its easy handle exists until it has stopped.
    var transfer: (any Transfer)?
    /// `job.attempts` may not pass this without the job failing (reset by `retry`, and by an
    /// attempt that moved bytes: a job that makes progress is not failed for needing many).
    private(set) var attemptLimit: Int
    /// When the job last kept more bytes than ever (or was queued): the no-progress deadline
    /// counts from here.
    var lastProgress: Timestamp
    /// The most bytes an attempt of this download has kept: only passing it is progress.
    private var mostBytesKept: Int64
    /// `scheme://host:port`: what the per-host connection cap counts.
    let host: String
    /// Bytes per second over the last tick while running (batch totals add them up).
    var rate: Int64 = 0
    var bytesAtLastTick: Int64?

    /// `now`: the scheduler's clock, which the no-progress deadline is counted on.
    init(job: Job, now: Timestamp) {
        self.job = job
        lastProgress = now
        host = HostKey.parse(job.url)?.key ?? job.url
        attemptLimit = Self.attemptLimit(after: job)
        mostBytesKept = job.bytesDone
    }

    var id: JobID { job.id }

    /// A full retry budget from the attempts made so far (`retry`, or an attempt that kept bytes).
    func renewRetryBudget() {
        attemptLimit = Self.attemptLimit(after: job)
    }

    /// A failed download attempt left `kept` durable bytes. Only more bytes than any attempt kept
    /// before is progress, which renews the retry budget: a server that keeps changing the
    /// entity or the range start makes every attempt start over and redo the same bytes, and
    /// those attempts use the budget up instead of renewing it forever.
    func attemptKept(_ kept: Int64, now: Timestamp) {
        guard kept > mostBytesKept else { return }
        mostBytesKept = kept
        lastProgress = now
        renewRetryBudget()
    }

    /// One more attempt that does not count against the budget (waiting for an unreachable host).
    func extendRetryBudget() {
        attemptLimit = attemptLimit.saturatingAdd(1)
    }

    /// Saturating: the store's checks keep both counts small, and nothing here may trap if one slips.
    private static func attemptLimit(after job: Job) -> Int {
        job.attempts.saturatingAdd(job.maxRetries).saturatingAdd(1)
    }

    /// Forgets the transfer, keeping what it learned (total size, bytes) in the job.
    func detach() {
        rate = 0
        bytesAtLastTick = nil
        guard transfer != nil else { return }
        job = live
        // A download keeps its durable bytes; an upload starts its body again.
        job.bytesDone = transfer?.keptBytes ?? 0
        transfer = nil
    }

    /// The job as clients should see it: live bytes from the running transfer.
    var live: Job {
        var live = job
        if let progress = transfer?.progress {
            live.bytesDone = progress.done
            live.bytesTotal = progress.total ?? job.bytesTotal
        }
        if let status = transfer?.status { live.httpStatus = status }
        return live
    }
}
