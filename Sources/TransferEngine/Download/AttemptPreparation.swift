/// Readies an attempt off the loop thread, in three steps so that the store's queue never waits
/// on a file (creating one is the costliest step of a small download): what the store knows
/// (`Plan`, on the store's queue), the files opened and checked (`open`, on a file thread), and
/// the attempt recorded (`record`, on the store's queue again). A download's partial file is
/// opened, checked to be the file transferd left and cut back to its last durable checkpoint; an
/// upload's sources are opened and checked against their snapshots.
enum AttemptPreparation: Sendable {
    /// Ready to transfer from `resume.bytesDurable` (0, and why, when the bytes it had were not
    /// to be trusted).
    case ready(PartialFile, ResumeState, startedOver: StartOverReason?)
    /// The partial file was complete and verified when the daemon stopped: only the rename is left.
    case finalize(PartialFile, ResumeState)
    /// The rename had happened too; only the record of it was missing (`resume`: the state its
    /// `finalizing` mark recorded, with the file's byte counts).
    case alreadyComplete(ResumeState)
    /// An upload's body, its files open and checked against their snapshots, and the WebDAV
    /// collections that must exist before it is sent (a directory backup's PUT).
    case upload(any UploadBody, collections: [String])
    /// A resumable upload's source, open and checked, and what the server knows it by (nil:
    /// nothing yet; the attempt creates the upload).
    case session(SourceReader, UploadSession?, parts: [UploadedPart])

    /// What the store holds for an attempt, read before any file is touched.
    struct Plan: Sendable {
        var job: Job
        var attempt: Int
        /// The time the attempt is recorded with (the scheduler's clock).
        var at: Timestamp
        /// A download's resume state (nil: none recorded yet).
        var resume: ResumeState?
        /// A directory backup's PUT: the collections between the batch's prefix and its file.
        var collections: [String] = []
        /// A resumable upload's session and acknowledged parts, as recorded.
        var session: (UploadSession, [UploadedPart])?

        /// A download's first attempt, with nothing stored to continue.
        var isFirstStart: Bool {
            job.kind == .download && attempt == 1 && job.bytesDone == 0 && resume == nil
        }

        /// The plan, known from the job where it tells all the store holds, else read on the
        /// store's queue; `then` runs on the caller's thread or on that queue. `fromLastRun`: the
        /// job was taken over from the store when the daemon started, and its row may not tell
        /// all: a start held on the loop (`Scheduler+HeldStarts`) is written with the job's next
        /// record, and a daemon that stopped between a finishing group's `finalizing` mark and its
        /// completion left the mark without the attempt's number. Such a job's plan is read.
        static func make(_ job: Job, attempt: Int, at now: Timestamp, fromLastRun: Bool = false, store: StoreQueue,
                         then: @escaping @Sendable (Result<Plan, any Error>) -> Void) {
            if !fromLastRun, let known = known(job, attempt: attempt, at: now) { return then(.success(known)) }
            store.async({ store in try Plan(job, attempt: attempt, at: now, in: store) }, completion: then)
        }

        /// The plan of an attempt for which the store holds nothing but the job itself, known
        /// without reading it (nil: it must be read). A download that never began an attempt
        /// in this daemon's run and has no bytes has no resume state worth reading: an attempt's
        /// resume state (its start's, a checkpoint's, a stop's, a finalizing mark) is recorded
        /// by the run that counted its number, so a later attempt reads it, and a job created
        /// from resume data counts its bytes. A plain
        /// upload reads nothing; a directory backup's PUT (its batch's prefix) and a resumable
        /// upload (its session) do.
        private static func known(_ job: Job, attempt: Int, at now: Timestamp) -> Plan? {
            let nothingStored = switch job.kind {
            case .download: attempt == 1 && job.bytesDone == 0
            case .upload: job.remote == nil && (job.method != "PUT" || job.batch == nil)
            }
            return nothingStored ? Plan(job, attempt: attempt, at: now) : nil
        }

        private init(_ job: Job, attempt: Int, at now: Timestamp) {
            self.job = job
            self.attempt = attempt
            at = now
        }

        /// Reads what the attempt needs from the store (the store's queue).
        init(_ job: Job, attempt: Int, at now: Timestamp, in store: JobStore) throws {
            self.job = job
            self.attempt = attempt
            at = now
            if job.kind == .upload, job.remote != nil {
                session = try store.uploadSession(job.id)
            } else if job.kind == .upload {
                if job.method == "PUT", let batch = job.batch, let prefix = try store.batchRecord(batch)?.backup?.prefix {
                    collections = WebDAVLayout.collections(above: job.url, under: prefix)
                }
            } else {
                resume = try store.resumeState(job.id)
            }
        }
    }

    /// All three steps at once, on the store's queue (tests; the scheduler runs them apart).
    static func prepare(_ job: Job, attempt: Int, at now: Timestamp = .now, in store: JobStore) throws -> AttemptPreparation {
        let plan = try Plan(job, attempt: attempt, at: now, in: store)
        let preparation = try open(plan)
        try store.transaction { try preparation.record(plan, in: store) }
        return preparation
    }

    /// Opens and checks the attempt's files (a file thread; touches no store).
    static func open(_ plan: Plan) throws -> AttemptPreparation {
        let job = plan.job
        if job.kind == .upload, job.remote != nil {
            guard let source = job.upload?.sources.first else {
                throw TransferError.io(path: "", operation: "upload without a file", errno: 0)
            }
            return .session(try SourceReader(source), plan.session?.0, parts: plan.session?.1 ?? [])
        }
        if job.kind == .upload { return try openUpload(job, collections: plan.collections) }
        guard let partialPath = job.partialPath else {
            throw TransferError.io(path: "", operation: "download without a destination", errno: 0)
        }
        // nil until the server's answer names a download into a directory.
        let destination = job.path
        var resume = plan.resume ?? ResumeState(partialPath: partialPath)
        // Marked finalizing: the file it marked is still at the partial path (not renamed yet),
        // or at the destination (renamed before the daemon stopped, its directory entry perhaps
        // not yet synced). Another file at either path is not it: the job starts over.
        if resume.finalizing {
            if resume.isMarkedFile(at: resume.partialPath) {
                return .finalize(try PartialFile(path: resume.partialPath), resume)
            }
            if let destination, resume.isMarkedFile(at: destination) {
                try DirectoryHandle(PartialFile.directory(of: destination)).sync()
                return .alreadyComplete(resume)
            }
            resume = ResumeState(partialPath: resume.partialPath)
        }
        // A download's first start has nothing on disk to continue: its file has no name until
        // its bytes are to be kept or it is complete (a small file's costs no directory entry).
        let modes = FileModes(umask: job.umask)
        let file = plan.isFirstStart
            ? try PartialFile.unnamed(path: resume.partialPath, directoryMode: modes.directory, mode: modes.file)
            : try PartialFile(path: resume.partialPath, directoryMode: modes.directory)
        // Never extend a file to a recorded length, never continue bytes that no validator can
        // tie to the entity, and never append to bytes transferd did not write: start over.
        var startedOver: StartOverReason?
        if resume.bytesDurable > 0 {
            if file.replacedForeignFile {
                startedOver = .foreign
            } else {
                startedOver = resume.reasonToStartOver(current: file.openedAs)
            }
        }
        if startedOver != nil { resume = ResumeState(partialPath: resume.partialPath) }
        // A new file (the first attempt of most downloads) is already as long as it should be:
        // no truncation, which would still write its inode.
        var identity: FileIdentity? = file.openedAs
        if file.openedAs.size != resume.bytesDurable {
            try file.truncate(to: resume.bytesDurable)
            identity = file.identity
        }
        return .ready(file, resume.identified(as: identity, writing: true), startedOver: startedOver)
    }

    /// The record of the attempt's start (and its `running` state) once its files are ready. A
    /// download that only needs its rename records nothing new (nil).
    func begin(_ plan: Plan) -> AttemptBegin? {
        let (id, number, at) = (plan.job.id, plan.attempt, plan.at)
        switch self {
        case .ready(_, let start, let startedOver):
            return AttemptBegin(id: id, number: number, rangeStart: start.bytesDurable, startedOver: startedOver,
                                resume: Self.worthRecording(start, plan), at: at)
        case .upload, .session:
            return AttemptBegin(id: id, number: number, rangeStart: 0, at: at)
        case .finalize, .alreadyComplete:
            return nil
        }
    }

    /// Records the attempt's start (the store's queue).
    func record(_ plan: Plan, in store: JobStore) throws {
        try begin(plan)?.write(to: store)
    }

    /// The resume state an attempt's start records: none for a download that starts with nothing
    /// stored (no resume state, no bytes, no size known). Its 0 bytes continue nothing, so its
    /// first checkpoint or its finalizing mark writes the first row: one statement less for
    /// each small file (`resume-data` answers such a job with the same empty state).
    private static func worthRecording(_ start: ResumeState, _ plan: Plan) -> ResumeState? {
        let fresh = plan.resume == nil && start.bytesDurable == 0 && plan.job.bytesDone == 0 && plan.job.bytesTotal == nil
        return fresh ? nil : start
    }

    /// An upload sends its whole body again on every attempt: multipart cannot continue mid-stream.
    private static func openUpload(_ job: Job, collections: [String]) throws -> AttemptPreparation {
        guard let spec = job.upload else {
            throw TransferError.io(path: "", operation: "upload without a body", errno: 0)
        }
        let readers = try spec.sources.map { source throws(TransferError) in try SourceReader(source) }
        if let form = spec.form, let boundary = spec.boundary {
            return .upload(MultipartBody(form: form, boundary: boundary, readers: readers), collections: [])
        }
        guard let reader = readers.first else {
            throw TransferError.io(path: "", operation: "upload without a body", errno: 0)
        }
        return .upload(RawBody(reader: reader), collections: collections)
    }
}
