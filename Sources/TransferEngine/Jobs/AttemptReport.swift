/// What the engine reports about an attempt that stopped (by itself or because it was told to):
/// values only, read from the transfer before it is released. Thread: a value; any.
struct AttemptReport: Sendable, Equatable {
    var attempt: Int
    /// How it ended; `completed` for an attempt that was stopped on request (it did not fail).
    var outcome: AttemptOutcome
    /// The final response's status (an attempt that ended before its request was sent, a refused
    /// MKCOL, has that one).
    var status: Int?
    /// Body bytes moved in this attempt.
    var transferred: Int64 = 0
    var metrics: AttemptMetrics?
    /// A download's state at the end, identified by its file: what it keeps (nil for an upload,
    /// which sends its body again, and for an attempt that never had a transfer).
    var resume: ResumeState?
    /// A resumable upload's bytes the server holds (its offset, or its parts): what it keeps.
    var serverBytes: Int64?
    /// The final response's `Retry-After`, in milliseconds.
    var retryAfter: Int64?
    /// The whole request went out (its server may have acted on it).
    var requestSent = false
    /// An upload's response, kept with the job.
    var response: UploadResponse?

    init(attempt: Int, outcome: AttemptOutcome, status: Int? = nil) {
        self.attempt = attempt
        self.outcome = outcome
        self.status = status
    }

    /// The bytes the job keeps from this attempt: a download's durable ones, a resumable
    /// upload's on the server (nil: none, an upload sends its body again).
    var keptBytes: Int64? { resume?.bytesDurable ?? serverBytes }

    /// The row that ends the attempt in `attempts`.
    func record(error: TransferError?) -> AttemptEnd {
        AttemptEnd(number: attempt, status: status, error: error?.record, bytes: transferred, metrics: metrics)
    }
}

/// The end of an attempt as `JobStore.finishAttempt` records it.
struct AttemptEnd: Sendable, Equatable {
    var number: Int
    var status: Int?
    var error: JobError?
    var bytes: Int64
    var metrics: AttemptMetrics?
}
