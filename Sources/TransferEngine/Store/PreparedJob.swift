/// A new job's row with every column decided but those the queueing decides: its id, its
/// destination's claim, and its batch and times where a manifest's queueing sets them. Made off
/// the store's queue for a manifest's lines while its later chunks come (`ManifestChecks`), so
/// that the queueing transaction at the last chunk only writes the rows (building them was
/// about half of that transaction's time; BENCHMARKS.md). Thread: a value.
struct PreparedJob: Equatable, Sendable {
    /// The job as its row holds it (`JobRow` reads back the same), its id 0: in one box, so
    /// that a row handed from the checks to the queueing is not a copy of its fields each time.
    var job: Job
    /// The JSON columns.
    let headers: String
    let upload: String?
    let tls: String?
    let network: String?
    let remote: String?
    /// As the client gave it (stored as given: nil is not `fail`).
    let onExists: OnExists?
    /// A download's destination as claimed (`DestinationPath.canonical`), when it was
    /// resolved with the row; else the queueing resolves it.
    var destination: String?

    init(_ new: NewJob, maxRetries: Int, upload: UploadSpec?, bytesDone: Int64, bytesTotal: Int64?, key: String?,
         now: Timestamp) throws {
        headers = new.headers.isEmpty ? "[]" : try JobStore.json(new.headers)
        self.upload = try upload.map { try JobStore.json($0) }
        tls = try new.tls.map { try JobStore.json($0) }
        network = try new.network.flatMap { $0.isDefault ? nil : $0 }.map { try JobStore.json($0) }
        remote = try new.remote.map { try JobStore.json($0) }
        onExists = new.onExists
        job = Job(Job.Fields(inserted: new, maxRetries: maxRetries, upload: upload, bytesDone: bytesDone,
                             bytesTotal: bytesTotal, key: key, now: now))
    }

    /// A manifest's download as `JobStore.queue` would insert it with `defaultRetries`, its
    /// destination resolved with `directories` (`DestinationPath.canonical`); nil for what
    /// queueing decides in the transaction itself: an upload (its files are looked at then),
    /// resume data (written with the row), and a `rename` destination (the free name is found
    /// then). Reads the file system: not on the loop thread.
    static func download(_ new: NewJob, defaultRetries: Int, key: String?,
                         directories: inout [String: String]?) -> PreparedJob? {
        guard new.kind == .download, new.resumeData == nil, new.onExists != .rename else { return nil }
        guard var row = try? PreparedJob(new, maxRetries: new.retries ?? defaultRetries, upload: nil, bytesDone: 0,
                                         bytesTotal: nil, key: key, now: .now) else { return nil }
        row.destination = new.path.map { DestinationPath.canonical($0, directories: &directories) }
        return row
    }
}

extension Job.Fields {
    /// A queued row's batch (when given) and times.
    mutating func stamp(batch: Int64?, now: Timestamp) {
        if let batch { self.batch = batch }
        createdAt = now
        updatedAt = now
    }
}

private extension Job.Fields {
    /// The job a new row holds, as `JobRow` reads it back (`insert` asserts that it does); its
    /// id is given once the row is inserted.
    init(inserted new: NewJob, maxRetries: Int, upload: UploadSpec?, bytesDone: Int64, bytesTotal: Int64?,
         key: String?, now: Timestamp) {
        let method = upload == nil ? nil : new.method
        let limit = new.limit == 0 ? nil : new.limit  // 0 means unlimited on the wire
        self.init(id: JobID(rawValue: 0), kind: new.kind, state: new.paused ? .paused : .queued,
                  stateReason: new.paused ? "created paused" : nil, url: new.url, path: new.path, headers: new.headers,
                  sha256: new.sha256, overwrite: new.overwrite || new.onExists == .overwrite, priority: new.priority,
                  batch: new.batch, limit: limit, maxRetries: maxRetries, bytesDone: bytesDone, bytesTotal: bytesTotal,
                  attempts: 0, httpStatus: nil, error: nil, nextAttemptAt: nil, createdAt: now, updatedAt: now,
                  finishedAt: nil, method: method, upload: upload)
        tls = new.tls ?? TLSOptions()
        network = new.network.flatMap { $0.isDefault ? nil : $0 } ?? NetworkOptions()
        remote = new.remote
        self.key = key
        onComplete = new.onComplete
        onFail = new.onFail
        umask = new.umask
        maxFilesize = new.maxFilesize
        // A tus PATCH says which offset it continues: it needs no key to be repeated.
        idempotencyKey = new.remote == nil ? IdempotencyKey.make(method: method, headers: new.headers) : nil
        retryUnsafe = new.retryUnsafe ?? false
        outputDirectory = new.kind == .download ? new.outputDirectory : nil
        onExists = new.onExists ?? .fail
        headerCommand = new.headerCommand
    }
}
