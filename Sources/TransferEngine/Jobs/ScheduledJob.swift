/// A job the scheduler holds in memory because it may still move (queued, running, waiting,
/// paused), with what runs it. Thread: the loop thread.
final class ScheduledJob {
    var job: Job
    /// The attempt in progress, from the moment its easy handle exists until it has stopped.
    var transfer: DownloadTransfer?
    /// `job.attempts` may not pass this without the job failing (reset by `retry`).
    var attemptLimit: Int

    init(job: Job) {
        self.job = job
        attemptLimit = job.attempts + job.maxRetries + 1
    }

    var id: JobID { job.id }

    /// Forgets the transfer, keeping what it learned (total size, bytes) in the job.
    func detach() {
        guard let transfer else { return }
        job = live
        job.bytesDone = transfer.checkpoint.bytesDurable
        self.transfer = nil
    }

    /// The job as clients should see it: live bytes from the running transfer.
    var live: Job {
        var live = job
        if let transfer {
            live.bytesDone = transfer.offset
            live.bytesTotal = transfer.resume.bytesTotal ?? job.bytesTotal
            if let status = transfer.status { live.httpStatus = status }
        }
        return live
    }
}
