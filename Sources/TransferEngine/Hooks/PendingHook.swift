/// A completion hook that is due: whose it is and what to run. Recorded (`pending_hooks`) in
/// the same transaction as the end that makes it due, so that it runs even if the daemon stops
/// first. Thread: a value; any.
struct PendingHook: Sendable, Equatable {
    /// Names the pending row.
    var key: String
    var job: JobID?
    var batch: Int64?
    /// `complete` or `fail`.
    var event: String
    var command: String
    /// The `TRANSFERD_*` variables.
    var environment: [String: String]

    /// `job 3` or `batch 2`, for log lines.
    var owner: String { job.map { "job \($0)" } ?? batch.map { "batch \($0)" } ?? "hook" }

    /// The hook a job runs for the state it ended in, if it has one.
    static func forJob(_ job: Job) -> PendingHook? {
        let event: String
        let command: String?
        switch job.state {
        case .completed: (event, command) = ("complete", job.onComplete)
        case .failed: (event, command) = ("fail", job.onFail)
        default: return nil
        }
        guard let command else { return nil }
        var environment = [
            "TRANSFERD_EVENT": event, "TRANSFERD_JOB_ID": job.id.description, "TRANSFERD_STATE": job.state.rawValue,
            "TRANSFERD_KIND": job.kind.rawValue, "TRANSFERD_URL": job.displayURL, "TRANSFERD_PATH": job.path ?? "",
            "TRANSFERD_BYTES": String(job.bytesDone),
        ]
        if let batch = job.batch { environment["TRANSFERD_BATCH_ID"] = String(batch) }
        if let status = job.httpStatus { environment["TRANSFERD_HTTP_STATUS"] = String(status) }
        if let error = job.error {
            environment["TRANSFERD_ERROR_CODE"] = error.code
            environment["TRANSFERD_ERROR"] = error.message
        }
        return PendingHook(key: newKey(), job: job.id, batch: job.batch, event: event, command: command,
                           environment: environment)
    }

    /// The hook a batch runs for the state it ended in: `completed` (or nothing to do) runs
    /// `--on-complete`, `failed` runs `--on-fail`, `cancelled` runs neither.
    static func forBatch(_ batch: BatchRecord, state: BatchState, counts: [JobState: Int]) -> PendingHook? {
        let event: String
        let command: String?
        switch state {
        case .completed, .empty: (event, command) = ("complete", batch.onComplete)
        case .failed: (event, command) = ("fail", batch.onFail)
        default: return nil
        }
        guard let command else { return nil }
        var environment = [
            "TRANSFERD_EVENT": event, "TRANSFERD_BATCH_ID": String(batch.id), "TRANSFERD_BATCH_NAME": batch.name,
            "TRANSFERD_STATE": state.rawValue,
            "TRANSFERD_JOBS_COMPLETED": String(counts[.completed] ?? 0),
            "TRANSFERD_JOBS_FAILED": String(counts[.failed] ?? 0),
            "TRANSFERD_JOBS_CANCELLED": String(counts[.cancelled] ?? 0),
        ]
        if let backup = batch.backup {
            environment["TRANSFERD_PATH"] = backup.directory
            environment["TRANSFERD_URL"] = Redaction.url(backup.prefix)
        }
        return PendingHook(key: newKey(), job: nil, batch: batch.id, event: event, command: command,
                           environment: environment)
    }

    private static func newKey() -> String {
        String(UInt64.random(in: 1...UInt64.max), radix: 16) + String(UInt64.random(in: 1...UInt64.max), radix: 16)
    }
}
