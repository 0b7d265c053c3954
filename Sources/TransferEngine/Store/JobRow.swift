/// A `jobs` row (`JobStore.jobColumns`) read back through `RowCheck`: the job, with values safe
/// to use whatever the row holds, and the first thing wrong with the row, if any.
/// Thread: a value; any.
struct JobRow {
    var job: Job
    var problem: InvalidJob?

    init(_ row: inout SQLiteRow) {
        var check = RowCheck()
        // The id is kept as stored: it is what the quarantine updates.
        let rawID = row.int64()
        check.check(rawID, "id", NumericLimits.id)
        let kind = check.word(row.text(), "kind", default: JobKind.download)
        let state = check.word(row.text(), "state", default: JobState.failed)
        let reason = row.optionalText()
        let url = row.text()
        let path = row.optionalText()
        let headers = check.strings(row.text(), "headers") ?? []
        let sha256 = row.optionalText()
        let overwrite = row.bool()
        let priority = check.word(row.text(), "priority", default: Priority.normal)
        let batch = check.number(&row, "batch_id", NumericLimits.id)
        let limit = check.rate(&row, "limit_rate")
        let maxRetries = check.number(&row, "max_retries", NumericLimits.retries) ?? 0
        let bytesDone = check.number(&row, "bytes_done", NumericLimits.bytes) ?? 0
        let bytesTotal = check.number(&row, "bytes_total", NumericLimits.bytes)
        let attempts = check.number(&row, "attempts", NumericLimits.attempts) ?? 0
        let httpStatus = check.number(&row, "http_status", NumericLimits.httpStatus)
        let errorCode = row.optionalText()
        let errorMessage = row.optionalText()
        let nextAttemptAt = check.number(&row, "next_attempt_at", NumericLimits.time).map(Timestamp.init(rawValue:))
        let createdAt = Timestamp(rawValue: check.number(&row, "created_at", NumericLimits.time) ?? 0)
        let updatedAt = Timestamp(rawValue: check.number(&row, "updated_at", NumericLimits.time) ?? 0)
        let finishedAt = check.number(&row, "finished_at", NumericLimits.time).map(Timestamp.init(rawValue:))
        let method = row.optionalText()
        let upload = check.json(row.optionalText(), UploadSpec.self, "upload")
        for source in upload?.sources ?? [] { check.check(source.size, "upload", NumericLimits.bytes) }
        let tls = check.json(row.optionalText(), TLSOptions.self, "tls")
        job = Job(Job.Fields(id: JobID(rawValue: rawID), kind: kind, state: state, stateReason: reason, url: url, path: path,
                             headers: headers, sha256: sha256, overwrite: overwrite, priority: priority,
                             batch: batch, limit: limit, maxRetries: maxRetries, bytesDone: bytesDone,
                             bytesTotal: bytesTotal, attempts: attempts, httpStatus: httpStatus,
                             error: errorCode.map { JobError(code: $0, message: errorMessage ?? "") },
                             nextAttemptAt: nextAttemptAt, createdAt: createdAt, updatedAt: updatedAt,
                             finishedAt: finishedAt, method: method, upload: upload))
        job.tls = tls ?? TLSOptions()
        job.key = row.optionalText()
        job.onComplete = row.optionalText()
        job.onFail = row.optionalText()
        job.umask = check.number(&row, "umask", NumericLimits.umask)
        job.maxFilesize = check.number(&row, "max_filesize", NumericLimits.bytes)
        job.idempotencyKey = row.optionalText()
        job.retryUnsafe = row.bool()
        job.waitReason = row.optionalText().map { check.word($0, "wait_reason", default: WaitReason.backoff) }
        job.startedAt = check.number(&row, "started_at", NumericLimits.time).map(Timestamp.init(rawValue:))
        job.outputDirectory = row.optionalText()
        job.onExists = row.optionalText().map { check.word($0, "on_exists", default: OnExists.fail) } ?? .fail
        job.headerCommand = row.optionalText()
        if kind == .download, path == nil, job.outputDirectory == nil {
            check.note("path", "a download with neither a path nor an output directory")
        }
        if let network = check.json(row.optionalText(), NetworkOptions.self, "network") {
            do { try network.check() } catch { check.note("network", error.message(naming: "network.\(error.field.rawValue)")) }
            job.network = network
        }
        job.remote = check.json(row.optionalText(), RemoteOptions.self, "remote")
        if (state == .waiting) != (job.waitReason != nil) {
            check.note("wait_reason", "a \(state.rawValue) job with wait_reason \(job.waitReason?.rawValue ?? "NULL")")
        }
        problem = check.problem
    }
}

/// A `resume_data` row read back through `RowCheck`.
struct ResumeRow {
    var state: ResumeState
    var problem: InvalidJob?

    static let columns = """
        partial_path, bytes_durable, etag, last_modified, bytes_total, finalizing,
        file_device, file_inode, file_size, file_mtime_ns, file_writing, decoded
        """

    init(_ row: inout SQLiteRow) {
        var check = RowCheck()
        let partialPath = row.text()
        let bytesDurable = check.number(&row, "resume_data.bytes_durable", NumericLimits.bytes) ?? 0
        let validators = Validators(etag: row.optionalText(), lastModified: row.optionalText())
        let bytesTotal = check.number(&row, "resume_data.bytes_total", NumericLimits.bytes)
        state = ResumeState(partialPath: partialPath, bytesDurable: bytesDurable, validators: validators,
                            bytesTotal: bytesTotal, finalizing: row.bool())
        // The partial file's identity is compared, never computed with: any stored value is safe.
        let (device, inode, size, modified) = (row.optionalInt64(), row.optionalInt64(), row.optionalInt64(),
                                               row.optionalInt64())
        if let device, let inode, let size, let modified {
            state.file = FileIdentity(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode),
                                      size: size, modifiedNanoseconds: modified)
        }
        state.fileWriting = row.bool()
        state.decoded = row.bool()
        problem = check.problem
    }
}
