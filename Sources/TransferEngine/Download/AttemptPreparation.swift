/// Readies a download attempt off the loop thread: opens the partial file, checks that it is
/// the file transferd left, cuts it back to the last durable checkpoint and records the attempt.
/// Runs on the store's queue.
enum AttemptPreparation: Sendable {
    /// Ready to transfer from `resume.bytesDurable` (0, and why, when the bytes it had were not
    /// to be trusted).
    case ready(PartialFile, ResumeState, startedOver: StartOverReason?)
    /// The partial file was complete and verified when the daemon stopped: only the rename is left.
    case finalize(PartialFile, ResumeState)
    /// The rename had happened too; only the record of it was missing.
    case alreadyComplete
    /// An upload's body, its files open and checked against their snapshots, and the WebDAV
    /// collections that must exist before it is sent (a directory backup's PUT).
    case upload(any UploadBody, collections: [String])

    /// `at`: the time the attempt is recorded with (the scheduler's clock).
    static func prepare(_ job: Job, attempt: Int, at now: Timestamp = .now, in store: JobStore) throws -> AttemptPreparation {
        if job.kind == .upload { return try prepareUpload(job, attempt: attempt, at: now, in: store) }
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
        let file = try PartialFile(path: resume.partialPath, directoryMode: FileModes(umask: job.umask).directory)
        // Never extend a file to a recorded length, never continue bytes that no validator can
        // tie to the entity, and never append to bytes transferd did not write: start over.
        var startedOver: StartOverReason?
        if resume.bytesDurable > 0 {
            if file.replacedForeignFile {
                startedOver = .foreign
            } else if let current = file.identity {
                startedOver = resume.reasonToStartOver(current: current)
            }
        }
        if startedOver != nil { resume = ResumeState(partialPath: resume.partialPath) }
        try file.truncate(to: resume.bytesDurable)
        let start = resume.identified(by: file, writing: true)
        try store.transaction {
            try store.saveResume(job.id, start)
            try store.beginAttempt(job.id, number: attempt, rangeStart: start.bytesDurable, startedOver: startedOver,
                                   now: now)
        }
        return .ready(file, start, startedOver: startedOver)
    }

    /// An upload sends its whole body again on every attempt: multipart cannot continue mid-stream.
    private static func prepareUpload(_ job: Job, attempt: Int, at now: Timestamp, in store: JobStore) throws -> AttemptPreparation {
        guard let spec = job.upload else {
            throw TransferError.io(path: "", operation: "upload without a body", errno: 0)
        }
        try store.beginAttempt(job.id, number: attempt, rangeStart: 0, now: now)
        let readers = try spec.sources.map { source throws(TransferError) in try SourceReader(source) }
        if let form = spec.form, let boundary = spec.boundary {
            return .upload(MultipartBody(form: form, boundary: boundary, readers: readers), collections: [])
        }
        guard let reader = readers.first else {
            throw TransferError.io(path: "", operation: "upload without a body", errno: 0)
        }
        return .upload(RawBody(reader: reader), collections: try collections(for: job, in: store))
    }

    /// A PUT of a directory backup needs the collections between the batch's prefix and its file.
    private static func collections(for job: Job, in store: JobStore) throws -> [String] {
        guard job.method == "PUT", let batch = job.batch,
              let prefix = try store.batchRecord(batch)?.backup?.prefix else { return [] }
        return WebDAVLayout.collections(above: job.url, under: prefix)
    }
}
