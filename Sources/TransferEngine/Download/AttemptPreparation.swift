/// Readies a download attempt off the loop thread: opens the partial file, cuts it back to the
/// last durable checkpoint and records the attempt. Runs on the store's queue.
enum AttemptPreparation: Sendable {
    /// Ready to transfer from `resume.bytesDurable`.
    case ready(PartialFile, ResumeState)
    /// The partial file was complete and verified when the daemon stopped: only the rename is left.
    case finalize(PartialFile, ResumeState)
    /// The rename had happened too; only the record of it was missing.
    case alreadyComplete

    static func prepare(_ job: Job, attempt: Int, in store: JobStore) throws -> AttemptPreparation {
        guard let destination = job.path, let partialPath = job.partialPath else {
            throw TransferError.io(path: "", operation: "download without a destination", errno: 0)
        }
        var resume = try store.resumeState(job.id) ?? ResumeState(partialPath: partialPath)
        if resume.finalizing {
            if PartialFile.exists(resume.partialPath) {
                return .finalize(try PartialFile(path: resume.partialPath), resume)
            }
            if PartialFile.exists(destination) { return .alreadyComplete }
            resume = ResumeState(partialPath: resume.partialPath)
        }
        let file = try PartialFile(path: resume.partialPath)
        // Never extend a file to a recorded length, and never continue bytes that no validator
        // can tie to the entity: both start over from byte 0.
        if file.size < resume.bytesDurable || (resume.bytesDurable > 0 && resume.validators.ifRange == nil) {
            resume = ResumeState(partialPath: resume.partialPath)
        }
        try file.truncate(to: resume.bytesDurable)
        let start = resume
        try store.transaction {
            try store.saveResume(job.id, start)
            try store.beginAttempt(job.id, number: attempt, rangeStart: start.bytesDurable)
        }
        return .ready(file, resume)
    }
}
