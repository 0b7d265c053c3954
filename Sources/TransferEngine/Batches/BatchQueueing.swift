#if canImport(Glibc)
import Glibc
#endif

/// Turns a whole manifest into rows, inside one store transaction: the batch, every job that is
/// not already there (by key) or unchanged (backups), and the backup records. Any bad line
/// throws, naming its line, and the caller's transaction leaves nothing behind. `plan` tells
/// what queueing a backup would do, and does nothing. Thread: the store's queue.
enum BatchQueueing {
    struct Outcome: Sendable {
        var batch: BatchRecord
        var created: Bool
        var jobs: [Job]
        var skipped: Int
    }

    /// `checks`: what was checked of the manifest's lines while it came (and the rows made of
    /// them); the others are checked here.
    static func queue(_ submission: BatchSubmission, checks: ManifestChecks = ManifestChecks(), defaultRetries: Int,
                      in store: JobStore) throws -> Outcome {
        // Each directory's spelling is resolved once for the whole manifest.
        store.batchDirectories = [:]
        defer { store.batchDirectories = nil }
        let (batch, created) = try resolveBatch(submission, in: store)
        let existingKeys = try store.keys(inBatch: batch.id)
        var seenKeys: [String: Int] = [:]
        var seenOutputs: [String: Int] = [:]
        var jobs: [Job] = []
        var skipped = 0
        // Rows made while the manifest came, inserted `JobStore.insertBlock` at a time; before
        // any job queued the other way, so that ids follow the manifest's lines.
        var made: [(row: PreparedJob, line: Int)] = []
        made.reserveCapacity(min(submission.entries.count, JobStore.insertBlock))
        func insertMade() throws {
            guard !made.isEmpty else { return }
            defer { made.removeAll(keepingCapacity: true) }
            do {
                jobs += try store.insert(made.map(\.row), batch: batch.id, now: .now)
            } catch {
                // One of them is refused (a destination another job owns): one by one, to name it.
                for (row, line) in made {
                    do {
                        jobs.append(try store.insert(row, batch: batch.id, now: .now))
                    } catch {
                        throw placed(error, "line \(line)")
                    }
                }
            }
        }
        // Each table grows once (resizing at every doubling was 4 % of queueing a manifest).
        jobs.reserveCapacity(submission.entries.count)
        seenOutputs.reserveCapacity(submission.entries.count)
        seenKeys.reserveCapacity(submission.entries.count { $0.key != nil })
        for (index, entry) in submission.entries.enumerated() {
            do {
                if let key = entry.key {
                    if let first = seenKeys.updateValue(entry.line, forKey: key) {
                        throw JobRefusal.invalid("key '\(key)' repeats line \(first)")
                    }
                    if existingKeys.contains(key) {
                        skipped += 1
                        continue
                    }
                }
                if submission.backup == nil,
                   let row = checks.row(at: index, umask: submission.umask, defaultRetries: defaultRetries) {
                    // Checked, and its row made, while the manifest came: only written now.
                    if let path = row.job.path, let first = seenOutputs.updateValue(entry.line, forKey: path) {
                        throw JobRefusal.invalid("\(path) is also the output of line \(first)")
                    }
                    made.append((row, entry.line))
                    if made.count == JobStore.insertBlock { try insertMade() }
                    continue
                }
                try insertMade()
                var new = entry.job(umask: submission.umask)
                new.batch = batch.id
                try checks.validate(new, at: index, umask: submission.umask)
                if new.kind == .download, let path = new.path, let first = seenOutputs.updateValue(entry.line, forKey: path) {
                    throw JobRefusal.invalid("\(path) is also the output of line \(first)")
                }
                var backupSource: SourceFile?
                if let target = submission.backup, let relativePath = entry.relativePath {
                    let (decision, source) = try decide(new, entry, target, relativePath, submission, in: store)
                    guard decision.sends else {
                        skipped += 1
                        continue
                    }
                    backupSource = source
                }
                let job = try store.queue(new, defaultRetries: defaultRetries, key: entry.key,
                                          refusingLinks: submission.backup != nil)
                if let target = submission.backup, let relativePath = entry.relativePath, let backupSource {
                    try store.recordBackupFile(target, relativePath, source: backupSource, sha256: entry.sha256, job: job.id)
                }
                jobs.append(job)
            } catch {
                // A backup's entries are files, a manifest's are lines.
                throw placed(error, entry.relativePath ?? "line \(entry.line)")
            }
        }
        try insertMade()
        return Outcome(batch: batch, created: created, jobs: jobs, skipped: skipped)
    }

    /// A refusal of one entry, named by its place (`line N`, or a backup's file), unless it
    /// names one already (an earlier line's row, refused when its block was inserted).
    private static func placed(_ error: any Error, _ place: String) -> any Error {
        switch error {
        case JobRefusal.at: error
        case let error as JobRefusal: JobRefusal.at(place: place, reason: error)
        case let error as DestinationRefusal: JobRefusal.at(place: place, reason: .destination(error))
        default: error
        }
    }

    private static func resolveBatch(_ submission: BatchSubmission, in store: JobStore) throws -> (BatchRecord, Bool) {
        if let id = submission.batch {
            guard let batch = try store.batchRecord(id) else { throw JobRefusal.unknownBatch(id) }
            return (batch, false)
        }
        let name = submission.name ?? "batch"
        if submission.reuse, let batch = try store.newestBatch(named: name) { return (batch, false) }
        return (try store.createBatch(name: name, onComplete: submission.onComplete, onFail: submission.onFail,
                                      backup: submission.backup), true)
    }

    /// The file a backup entry uploads, as it is now; nil when it no longer exists. A symlink
    /// there (the scan skipped links; one put there since) is refused, and the upload never follows one.
    private static func snapshot(of job: NewJob) throws(JobRefusal) -> SourceFile? {
        let path = job.path ?? job.form?.compactMap(\.file).first ?? ""
        switch SourceFile.snapshot(path, refusingLinks: true) {
        case .success(let source): return source
        case .failure(.io(_, _, let code)) where code == ENOENT: return nil
        case .failure(let error): throw JobRefusal.invalid(error.message)
        }
    }

    /// What queueing a backup's entry does with its file, and the file as it is now (nil when
    /// it was deleted since the directory was scanned: it is not part of this backup).
    private static func decide(_ job: NewJob, _ entry: ManifestEntry, _ target: BackupTarget, _ relativePath: String,
                               _ submission: BatchSubmission, in store: JobStore) throws -> (BackupDecision, SourceFile?) {
        guard let source = try snapshot(of: job) else { return (.gone, nil) }
        let decision = BackupDecision.decide(source, sha256: entry.sha256, checksum: submission.checksum,
                                             record: try store.backupFile(target, relativePath))
        return (decision, source)
    }

    /// `backup-plan`: what `queue` would do with each file of a backup's entries, in their order,
    /// without creating or recording anything. An entry `queue` would refuse is refused the same
    /// way, naming its file.
    static func plan(_ submission: BatchSubmission, in store: JobStore) throws -> [BackupDecision] {
        guard let target = submission.backup else { throw JobRefusal.invalid("a backup plan needs 'backup'") }
        var decisions: [BackupDecision] = []
        decisions.reserveCapacity(submission.entries.count)
        for entry in submission.entries {
            guard let relativePath = entry.relativePath else {
                throw JobRefusal.at(place: "line \(entry.line)", reason: .invalid("a backup plan's entry needs 'relativePath'"))
            }
            do {
                var new = entry.job
                new.umask = new.umask ?? submission.umask
                try JobValidation.validate(new)
                decisions.append(try decide(new, entry, target, relativePath, submission, in: store).0)
            } catch let error as JobRefusal {
                throw JobRefusal.at(place: relativePath, reason: error)
            }
        }
        return decisions
    }
}
