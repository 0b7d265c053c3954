import Foundation
import Testing
@testable import TransferEngine

@Suite struct BatchQueueingTests {
    let directory = TemporaryDirectory()

    private func download(_ line: Int, key: String?, _ name: String, url: String? = nil) -> ManifestEntry {
        ManifestEntry(line: line, key: key,
                      job: NewJob(kind: .download, url: url ?? "http://127.0.0.1/\(name)", path: directory.file(name)))
    }

    private func submission(name: String? = "nightly", batch: Int64? = nil, reuse: Bool = false,
                            backup: BackupTarget? = nil, _ entries: [ManifestEntry]) -> BatchSubmission {
        BatchSubmission(token: "t", final: true, batch: batch, name: name, reuse: reuse, onComplete: "echo done",
                        onFail: "echo failed", backup: backup, entries: entries)
    }

    private func queue(_ submission: BatchSubmission, checks: ManifestChecks = ManifestChecks(), in store: JobStore,
                       defaultRetries: Int = 3) throws -> BatchQueueing.Outcome {
        try store.transaction {
            try BatchQueueing.queue(submission, checks: checks, defaultRetries: defaultRetries, in: store)
        }
    }

    /// The ControlError a submission is refused with, after the caller's transaction rolled back.
    /// The refusal as the control protocol answers it.
    private func refusal(_ submission: BatchSubmission, checks: ManifestChecks = ManifestChecks(),
                         in store: JobStore) -> ControlError? {
        do {
            _ = try queue(submission, checks: checks, in: store)
            return nil
        } catch let error as JobRefusal {
            return ControlError(error)
        } catch {
            Issue.record("not a JobRefusal: \(error)")
            return nil
        }
    }

    @Test func createsABatchWithItsJobs() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let outcome = try queue(submission([download(1, key: "a", "a"), download(2, key: "b", "b"),
                                            download(4, key: nil, "c")]), in: store)
        #expect(outcome.created)
        #expect(outcome.skipped == 0)
        #expect(outcome.batch.name == "nightly")
        #expect(outcome.batch.onComplete == "echo done")
        #expect(outcome.batch.onFail == "echo failed")
        #expect(outcome.jobs.count == 3)
        #expect(outcome.jobs.map(\.key) == ["a", "b", nil])
        #expect(outcome.jobs.allSatisfy { $0.batch == outcome.batch.id && $0.state == .queued && $0.maxRetries == 3 })
        #expect(try store.batchRecord(outcome.batch.id) == outcome.batch)
        #expect(try store.keys(inBatch: outcome.batch.id) == ["a", "b"])
        #expect(Set(try store.jobs(batch: outcome.batch.id).map(\.id)) == Set(outcome.jobs.map(\.id)))
    }

    @Test func aWaitOnABatchReadsAllItsIdsAndOnlyTheJobsThatEnded() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let outcome = try queue(submission([download(1, key: "a", "a"), download(2, key: "b", "b"),
                                            download(3, key: "c", "c"), download(4, key: "d", "d")]), in: store)
        let ids = outcome.jobs.map(\.id)
        try store.setState(ids[0], StateChange(.running))
        try store.setState(ids[0], StateChange(.completed))
        try store.setState(ids[1], StateChange(.cancelled))
        try store.setState(ids[2], StateChange(.paused))
        let other = try queue(submission(name: "other", [download(1, key: "e", "e")]), in: store)
        try store.setState(other.jobs[0].id, StateChange(.cancelled))

        let (all, ended) = try store.batchForWait(outcome.batch.id)
        #expect(Set(all) == Set(ids))
        #expect(ended.map(\.id) == [ids[1], ids[0]], "newest first")
        #expect(ended.map(\.state) == [.cancelled, .completed])
    }

    @Test func aNamelessSubmissionIsCalledBatch() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let outcome = try queue(submission(name: nil, [download(1, key: nil, "a")]), in: store)
        #expect(outcome.batch.name == "batch")
    }

    @Test func retriesComeFromTheEntryOrTheDefault() throws {
        let store = try JobStore(path: directory.database("t.db"))
        var explicit = download(2, key: nil, "b")
        explicit.job.retries = 9
        let outcome = try queue(submission([download(1, key: nil, "a"), explicit]), in: store, defaultRetries: 5)
        #expect(outcome.jobs.map(\.maxRetries) == [5, 9])
    }

    @Test func addingToABatchSkipsTheKeysAlreadyThere() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let first = try queue(submission([download(1, key: "a", "a"), download(2, key: "b", "b")]), in: store)
        // "a" again (even with a different output) is skipped; "c" and a keyless line are queued.
        let second = try queue(submission(name: nil, batch: first.batch.id,
                                          [download(1, key: "a", "other"), download(2, key: "c", "c"),
                                           download(3, key: nil, "d")]), in: store)
        #expect(!second.created)
        #expect(second.batch == first.batch)
        #expect(second.skipped == 1)
        #expect(second.jobs.map(\.key) == ["c", nil])
        #expect(try store.keys(inBatch: first.batch.id) == ["a", "b", "c"])
        #expect(try store.jobs(batch: first.batch.id).count == 4)
        #expect(try store.batchRecords().count == 1)
    }

    @Test func anUnknownBatchIsRefused() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let error = refusal(submission(batch: 99, [download(1, key: nil, "a")]), in: store)
        #expect(error == ControlError(.unknownBatch, "no batch 99 (create one with 'transferctl batch create NAME')"))
    }

    @Test func aBadEntryNamesItsLineAndLeavesNothingBehind() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let error = try #require(refusal(submission([download(1, key: "a", "a"), download(2, key: "b", "b"),
                                                     download(5, key: "c", "c", url: "ftp://127.0.0.1/c")]), in: store))
        #expect(error.code == .invalidArgument)
        #expect(error.message.hasPrefix("line 5: "))
        #expect(error.message.contains("ftp://127.0.0.1/c"))
        #expect(try store.batchRecords().isEmpty)
        #expect(try store.jobs().isEmpty)
    }

    @Test func linesCheckedWhileTheManifestCameAreNotCheckedAgainAndTheirRefusalsKeepTheirPlace() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let entries = [download(1, key: "a", "a"), download(2, key: "b", "b", url: "ftp://127.0.0.1/b"), download(3, key: "c", "c")]
        var checks = ManifestChecks.check(entries[..<2], from: 0, umask: 0o22)
        // Line 3's destination appeared after it was checked: the check stands, as if the file
        // had appeared after the queueing (its rename then refuses to replace it).
        checks.append(ManifestChecks.check(entries[2...], from: 2, umask: 0o22))
        let fixed = [entries[0], download(2, key: "b", "b"), entries[2]]
        let fixedChecks = ManifestChecks.check(fixed, from: 0, umask: 0o22)
        try Data("new".utf8).write(to: URL(fileURLWithPath: directory.file("c")))
        var whole = submission(entries)
        whole.umask = 0o22
        // A key repeated before the refused line is still the first problem, as without checks.
        var repeated = whole
        repeated.entries[1].key = "a"
        #expect(refusal(repeated, checks: checks, in: store) == ControlError(.invalidArgument, "line 2: key 'a' repeats line 1"))
        let error = try #require(refusal(whole, checks: checks, in: store))
        #expect(error.message.hasPrefix("line 2: ") && error.message.contains("ftp://127.0.0.1/b"))
        whole.entries = fixed
        #expect(try queue(whole, checks: fixedChecks, in: store).jobs.count == 3)
        // Checks made with another umask than the manifest's are not trusted: line 3 is checked again.
        let other = submission(name: "other", [download(3, key: "c", "c")])
        let stale = refusal(other, checks: ManifestChecks.check(other.entries, from: 0, umask: 0o77), in: store)
        #expect(stale?.message.hasPrefix("line 3: ") == true)
    }

    /// Rows made while the manifest came (`PreparedJob`) are queued as the transaction makes
    /// them: the same jobs, columns and claims, read back from the store.
    @Test func rowsPreparedWhileTheManifestCameAreTheRowsTheTransactionWouldMake() throws {
        func manifest(_ directory: String) -> [ManifestEntry] {
            var rich = NewJob(kind: .download, url: "http://127.0.0.1/r", path: self.directory.file("\(directory)/r"),
                              headers: ["X-A: 1"], sha256: String(repeating: "ab", count: 32), priority: .high, limit: 0, retries: 2, paused: true,
                              tls: TLSOptions(insecure: true), network: NetworkOptions(connectTimeout: 2),
                              onComplete: "echo c", headerCommand: "/bin/h")
            rich.maxFilesize = 9
            rich.onExists = .overwrite
            var named = NewJob(kind: .download, url: "http://127.0.0.1/n", path: nil)
            named.outputDirectory = self.directory.file(directory)
            var renamed = NewJob(kind: .download, url: "http://127.0.0.1/x", path: self.directory.file("\(directory)/x"))
            renamed.onExists = .rename  // not prepared: the free name is found in the transaction
            let upload = NewJob(kind: .upload, url: "http://127.0.0.1/u", path: self.directory.file("u"))
            return [ManifestEntry(line: 1, key: "r", job: rich), ManifestEntry(line: 2, job: named),
                    ManifestEntry(line: 3, key: "x", job: renamed), ManifestEntry(line: 4, job: upload),
                    download(5, key: nil, "\(directory)/plain")]
        }
        try Data("u".utf8).write(to: URL(fileURLWithPath: directory.file("u")))
        let store = try JobStore(path: directory.database("t.db"))
        var plain = submission(name: "plain", manifest("a"))
        plain.umask = 0o27
        var prepared = submission(name: "prepared", manifest("b"))
        prepared.umask = 0o27
        let checks = ManifestChecks.check(prepared.entries, from: 0, umask: 0o27, defaultRetries: 3)
        #expect((0..<5).map { checks.row(at: $0, umask: 0o27, defaultRetries: 3) != nil } == [true, true, false, false, true])
        #expect(checks.row(at: 0, umask: 0o27, defaultRetries: 4) == nil, "rows made with other retries are made again")
        let made = try queue(plain, in: store).jobs
        let written = try queue(prepared, checks: checks, in: store).jobs
        #expect(written.count == 5)
        for (one, other) in zip(made, written) {
            // Alike but for what differs by design: ids, the batch, the directory, the times.
            func normalized(_ job: Job) throws -> Job.Fields {
                var fields = try #require(try store.job(job.id)).fields
                #expect(Job(fields) == job, "job \(job.id) as queued is the job as stored")
                fields.id = JobID(rawValue: 0)
                fields.batch = nil
                fields.createdAt = Timestamp(rawValue: 0)
                fields.updatedAt = Timestamp(rawValue: 0)
                fields.path = fields.path?.replacingOccurrences(of: "/b/", with: "/a/")
                fields.url = fields.url.replacingOccurrences(of: "/b/", with: "/a/")
                fields.outputDirectory = fields.outputDirectory.map { $0.hasSuffix("/b") ? String($0.dropLast()) + "a" : $0 }
                return fields
            }
            #expect(try normalized(one) == normalized(other))
        }
        // The prepared rows claim their destinations as the others do.
        let again = try #require(refusal(submission(name: "again", [download(7, key: nil, "b/plain")]), in: store))
        #expect(again.message.hasPrefix("line 7: ") && again.message.contains("job \(written[4].id)"))
    }

    /// Rows made while the manifest came go in `JobStore.insertBlock` to a statement: ids follow
    /// the lines across blocks, each job is as stored, and a destination another job owns, in a
    /// later block, is refused naming its own line, with nothing of the manifest left behind.
    @Test func rowsMadeAheadGoInBlocksAndARefusedOneNamesItsLine() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let count = 2 * JobStore.insertBlock + 20
        var whole = submission((1...count).map { download($0, key: nil, "m/f\($0)") })
        whole.umask = 0o22
        let checks = ManifestChecks.check(whole.entries, from: 0, umask: 0o22, defaultRetries: 3)
        let jobs = try queue(whole, checks: checks, in: store).jobs
        #expect(jobs.map(\.path) == whole.entries.map(\.job.path))
        #expect(zip(jobs, jobs.dropFirst()).allSatisfy { $1.id.rawValue == $0.id.rawValue + 1 }, "ids follow the lines")
        for job in [jobs[0], jobs[JobStore.insertBlock], jobs[count - 1]] {
            #expect(try store.job(job.id) == job, "job \(job.id) as queued is the job as stored")
        }

        let owner = try store.insert(NewJob(kind: .download, url: "http://127.0.0.1/o", path: directory.file("n/f75")),
                                     maxRetries: 3, resume: nil)
        var next = submission(name: "next", (1...count).map { download($0, key: nil, "n/f\($0)") })
        next.umask = 0o22
        let nextChecks = ManifestChecks.check(next.entries, from: 0, umask: 0o22, defaultRetries: 3)
        let refused = try #require(refusal(next, checks: nextChecks, in: store))
        #expect(refused.message.hasPrefix("line 75: ") && refused.message.contains("job \(owner.id)"), "\(refused.message)")
        #expect(try store.batchRecords().map(\.name) == ["nightly"], "nothing of the refused manifest is left")
        #expect(try store.jobs().count == count + 1)
    }

    @Test func aBadEntryInAnExistingBatchAddsNothingToIt() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let first = try queue(submission([download(1, key: "a", "a")]), in: store)
        var relative = download(3, key: "r", "r")
        relative.job.path = "relative/r"
        let error = try #require(refusal(submission(batch: first.batch.id, [download(1, key: "b", "b"), relative]),
                                         in: store))
        #expect(error.message.hasPrefix("line 3: "))
        #expect(try store.keys(inBatch: first.batch.id) == ["a"])
        #expect(try store.jobs().count == 1)
    }

    @Test func aKeyRepeatedInOneSubmissionNamesTheFirstLine() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let error = refusal(submission([download(1, key: "a", "a"), download(2, key: "b", "b"),
                                        download(3, key: "a", "c")]), in: store)
        #expect(error == ControlError(.invalidArgument, "line 3: key 'a' repeats line 1"))
        #expect(try store.jobs().isEmpty)
    }

    @Test func twoLinesWithOneOutputAreRefused() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let error = refusal(submission([download(1, key: "a", "same"), download(2, key: "b", "same")]), in: store)
        #expect(error == ControlError(.invalidArgument, "line 2: \(directory.file("same")) is also the output of line 1"))
        #expect(try store.batchRecords().isEmpty)
    }

    @Test func anUploadOfAMissingFileNamesItsLine() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let upload = ManifestEntry(line: 7, key: "u",
                                   job: NewJob(kind: .upload, url: "http://127.0.0.1/up", path: directory.file("missing")))
        let error = try #require(refusal(submission([download(1, key: "a", "a"), upload]), in: store))
        #expect(error.message.hasPrefix("line 7: "))
        #expect(try store.jobs().isEmpty)
    }

    @Test func reuseTakesTheNewestBatchWithThatName() throws {
        let store = try JobStore(path: directory.database("t.db"))
        _ = try store.createBatch(name: "x", onComplete: nil, onFail: nil, backup: nil)
        _ = try store.createBatch(name: "y", onComplete: nil, onFail: nil, backup: nil)
        let newest = try store.createBatch(name: "x", onComplete: nil, onFail: nil, backup: nil)
        _ = try store.createBatch(name: "z", onComplete: nil, onFail: nil, backup: nil)
        let outcome = try queue(submission(name: "x", reuse: true, [download(1, key: "a", "a")]), in: store)
        #expect(!outcome.created)
        #expect(outcome.batch == newest)
        #expect(try store.keys(inBatch: newest.id) == ["a"])
        #expect(try store.batchRecords().count == 4)
    }

    @Test func reuseCreatesTheBatchWhenNoneHasThatName() throws {
        let store = try JobStore(path: directory.database("t.db"))
        _ = try store.createBatch(name: "other", onComplete: nil, onFail: nil, backup: nil)
        let outcome = try queue(submission(name: "x", reuse: true, [download(1, key: nil, "a")]), in: store)
        #expect(outcome.created)
        #expect(outcome.batch.name == "x")
        #expect(try store.newestBatch(named: "x") == outcome.batch)
    }

    @Test func withoutReuseASameNamedBatchIsNew() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let old = try store.createBatch(name: "x", onComplete: nil, onFail: nil, backup: nil)
        let outcome = try queue(submission(name: "x", [download(1, key: nil, "a")]), in: store)
        #expect(outcome.created)
        #expect(outcome.batch.id != old.id)
        #expect(try store.newestBatch(named: "x")?.id == outcome.batch.id)
    }

    @Test func aBackupSkipsFilesItAlreadyQueuedUnchanged() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let source = directory.file("photo.jpg")
        try Data("0123456789".utf8).write(to: URL(fileURLWithPath: source))
        let target = BackupTarget(directory: directory.path, prefix: "http://127.0.0.1/backup/")
        func entry() -> ManifestEntry {
            ManifestEntry(line: 1, key: nil, job: NewJob(kind: .upload, url: "http://127.0.0.1/backup/photo.jpg", path: source),
                          relativePath: "photo.jpg")
        }
        let first = try queue(submission(name: "backup", backup: target, [entry()]), in: store)
        #expect(first.jobs.count == 1)
        #expect(first.batch.backup == target)
        let record = try #require(try store.backupFile(target, "photo.jpg"))
        #expect(record.size == 10)
        #expect(!record.done)
        #expect(record.jobState == .queued)

        // Queued and unchanged: skipped.
        let second = try queue(submission(name: "backup", backup: target, [entry()]), in: store)
        #expect(second.jobs.isEmpty)
        #expect(second.skipped == 1)

        // Failed and not uploaded: queued again.
        let job = try #require(first.jobs.first)
        try store.setState(job.id, StateChange(.failed))
        let third = try queue(submission(name: "backup", backup: target, [entry()]), in: store)
        #expect(third.jobs.count == 1)
        #expect(third.skipped == 0)
        let uploaded = try #require(third.jobs.first)
        #expect(try store.backupFile(target, "photo.jpg")?.jobState == .queued)

        // Uploaded and unchanged: skipped.
        try store.setState(uploaded.id, StateChange(.completed))
        try store.markBackupUploaded(uploaded.id)
        let fourth = try queue(submission(name: "backup", backup: target, [entry()]), in: store)
        #expect(fourth.jobs.isEmpty)
        #expect(fourth.skipped == 1)

        // Changed (another size): queued again.
        try Data("0123456789abc".utf8).write(to: URL(fileURLWithPath: source))
        let fifth = try queue(submission(name: "backup", backup: target, [entry()]), in: store)
        #expect(fifth.jobs.count == 1)
        #expect(try store.backupFile(target, "photo.jpg")?.size == 13)
    }

    @Test func aChecksumBackupComparesDigestsNotSizes() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let source = directory.file("doc.txt")
        try Data("first".utf8).write(to: URL(fileURLWithPath: source))
        let target = BackupTarget(directory: directory.path, prefix: "http://127.0.0.1/backup/")
        func submit(sha256: String) throws -> BatchQueueing.Outcome {
            let entry = ManifestEntry(line: 1, key: nil,
                                      job: NewJob(kind: .upload, url: "http://127.0.0.1/backup/doc.txt", path: source),
                                      relativePath: "doc.txt", sha256: sha256)
            var submission = submission(name: "backup", backup: target, [entry])
            submission.checksum = true
            return try queue(submission, in: store)
        }
        let first = try submit(sha256: "aaa")
        let job = try #require(first.jobs.first)
        #expect(try store.backupFile(target, "doc.txt")?.sha256 == "aaa")
        try store.setState(job.id, StateChange(.completed))
        try store.markBackupUploaded(job.id)
        // Another size, same digest: unchanged.
        try Data("second!".utf8).write(to: URL(fileURLWithPath: source))
        #expect(try submit(sha256: "aaa").skipped == 1)
        // Another digest: queued.
        #expect(try submit(sha256: "bbb").jobs.count == 1)
    }

    @Test func aBackupEntrysErrorNamesItsFileNotItsLine() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let target = BackupTarget(directory: directory.path, prefix: "http://127.0.0.1/backup/")
        // A directory where a file was: it exists, but cannot be uploaded.
        try FileManager.default.createDirectory(atPath: directory.file("odd"), withIntermediateDirectories: true)
        let entry = ManifestEntry(line: 1, key: nil,
                                  job: NewJob(kind: .upload, url: "http://127.0.0.1/backup/odd", path: directory.file("odd")),
                                  relativePath: "sub/odd")
        let error = try #require(refusal(submission(backup: target, [entry]), in: store))
        #expect(error.message.hasPrefix("sub/odd: "))
        #expect(try store.batchRecords().isEmpty)
    }

    @Test func aBackupSkipsAFileDeletedSinceTheScan() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let target = BackupTarget(directory: directory.path, prefix: "http://127.0.0.1/backup/")
        let entry = ManifestEntry(line: 1, key: nil,
                                  job: NewJob(kind: .upload, url: "http://127.0.0.1/backup/gone", path: directory.file("gone")),
                                  relativePath: "sub/gone")
        let outcome = try queue(submission(backup: target, [entry]), in: store)
        #expect(outcome.jobs.isEmpty)
        #expect(outcome.skipped == 1)
    }

    /// `backup-plan` answers, file by file, what queueing the same entries would do, and
    /// creates and records nothing.
    @Test func aBackupPlanTellsWhatQueueingWouldDoAndDoesNothing() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let target = BackupTarget(directory: directory.path, prefix: "http://127.0.0.1/backup/")
        try Data("0123456789".utf8).write(to: URL(fileURLWithPath: directory.file("a.txt")))
        try Data("b".utf8).write(to: URL(fileURLWithPath: directory.file("b.txt")))
        func entry(_ name: String, url: String? = nil) -> ManifestEntry {
            ManifestEntry(line: 1, key: nil, job: NewJob(kind: .upload, url: url ?? "http://127.0.0.1/backup/\(name)",
                                                         path: directory.file(name)), relativePath: name)
        }
        func plan(_ entries: [ManifestEntry]) throws -> [BackupDecision] {
            try store.transaction { try BatchQueueing.plan(submission(name: "backup", backup: target, entries), in: store) }
        }

        #expect(try plan([entry("a.txt"), entry("b.txt"), entry("gone.txt")]) == [.new, .new, .gone])
        #expect(try store.batchRecords().isEmpty, "a plan creates no batch")
        #expect(try store.backupFile(target, "a.txt") == nil, "and records no file")

        let first = try queue(submission(name: "backup", backup: target, [entry("a.txt")]), in: store)
        #expect(try plan([entry("a.txt"), entry("b.txt")]) == [.queued, .new])
        let job = try #require(first.jobs.first)
        try store.setState(job.id, StateChange(.failed))
        #expect(try plan([entry("a.txt")]) == [.incomplete])
        try store.setState(job.id, StateChange(.completed))
        try store.markBackupUploaded(job.id)
        #expect(try plan([entry("a.txt")]) == [.unchanged])

        // Same size, another modification time; then another size.
        let later = Date().addingTimeInterval(3600)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: directory.file("a.txt"))
        #expect(try plan([entry("a.txt")]) == [.changedTime])
        try Data("01234567890".utf8).write(to: URL(fileURLWithPath: directory.file("a.txt")))
        #expect(try plan([entry("a.txt")]) == [.changedSize])
        #expect(try store.batchRecords().count == 1, "still only the batch queued above")

        // What queueing would refuse, a plan refuses the same way, naming the file.
        do {
            _ = try plan([entry("b.txt", url: "ftp://127.0.0.1/backup/b.txt")])
            Issue.record("a plan took a URL queueing refuses")
        } catch let error as JobRefusal {
            #expect(ControlError(error).code == .invalidArgument)
            #expect(error.message.hasPrefix("b.txt: unsupported URL scheme"), "\(error.message)")
        }
    }

    @Test func backupDecisionsWithAndWithoutChecksums() {
        let source = SourceFile(path: "/d/f", size: 10, modified: 100)
        func record(size: Int64 = 10, modified: Int64 = 100, sha256: String? = nil, done: Bool = true,
                    state: JobState? = .completed) -> JobStore.BackupFileRecord {
            JobStore.BackupFileRecord(size: size, modified: modified, sha256: sha256, done: done, jobState: state)
        }
        func decide(_ record: JobStore.BackupFileRecord?, sha256: String? = nil, checksum: Bool = false) -> BackupDecision {
            BackupDecision.decide(source, sha256: sha256, checksum: checksum, record: record)
        }
        #expect(decide(nil) == .new)
        #expect(decide(record()) == .unchanged)
        #expect(decide(record(size: 11)) == .changedSize)
        #expect(decide(record(size: 11, modified: 5)) == .changedSize, "the size is named first")
        #expect(decide(record(modified: 5)) == .changedTime)
        #expect(decide(record(done: false, state: .running)) == .queued)
        #expect(decide(record(done: false, state: .waiting)) == .queued)
        #expect(decide(record(done: false, state: .failed)) == .incomplete)
        #expect(decide(record(done: false, state: .cancelled)) == .incomplete)
        #expect(decide(record(done: false, state: nil)) == .incomplete, "its job is gone")
        // --checksum: the digest decides, not the size or the time.
        #expect(decide(record(size: 3, modified: 5, sha256: "aa"), sha256: "aa", checksum: true) == .unchanged)
        #expect(decide(record(sha256: "aa"), sha256: "bb", checksum: true) == .changedContents)
        #expect(decide(record(sha256: nil), sha256: "bb", checksum: true) == .noChecksum)
        #expect(BackupDecision.allCases.filter(\.sends) == [.new, .changedSize, .changedTime, .changedContents,
                                                            .noChecksum, .incomplete])
    }
}

@Suite struct JobStoreBatchesTests {
    let directory = TemporaryDirectory()

    private func insert(_ store: JobStore, _ name: String, batch: Int64?, key: String? = nil,
                        total: Int64? = nil) throws -> Job {
        var new = NewJob(kind: .download, url: "http://127.0.0.1/\(name)", path: directory.file(name))
        new.batch = batch
        return try store.insert(new, maxRetries: 0, resume: nil, bytesTotal: total, key: key)
    }

    @Test func createsAndFindsBatches() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let target = BackupTarget(directory: "/d", prefix: "http://h/p/")
        let made = try store.createBatch(name: "n", onComplete: "c", onFail: "f", backup: target,
                                         now: Timestamp(rawValue: 1234))
        let plain = try store.createBatch(name: "n", onComplete: nil, onFail: nil, backup: nil)
        #expect(try store.batchRecord(made.id) == made)
        #expect(try store.batchRecord(made.id)?.createdAt == Timestamp(rawValue: 1234))
        #expect(try store.batchRecord(plain.id)?.backup == nil)
        #expect(try store.batchRecord(999) == nil)
        #expect(try store.newestBatch(named: "n") == plain)
        #expect(try store.newestBatch(named: "none") == nil)
        #expect(try store.batchRecords() == [plain, made])
        #expect(try store.batchRecords(limit: 1) == [plain])
    }

    @Test func batchTotalsCountByStateAndLeaveCancelledBytesOut() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let batch = try store.createBatch(name: "b", onComplete: nil, onFail: nil, backup: nil).id
        let other = try store.createBatch(name: "o", onComplete: nil, onFail: nil, backup: nil).id
        let done = try insert(store, "done", batch: batch, total: 1000)
        try store.setState(done.id, StateChange(.completed, bytesDone: 1000))
        let moving = try insert(store, "moving", batch: batch, total: 500)
        try store.setState(moving.id, StateChange(.running, bytesDone: 200))
        // Cancelled with an unknown size: neither its bytes nor its unknown size count.
        let dropped = try insert(store, "dropped", batch: batch, total: nil)
        try store.setState(dropped.id, StateChange(.cancelled, bytesDone: 50))
        let elsewhere = try insert(store, "elsewhere", batch: other, total: nil)
        try store.setState(elsewhere.id, StateChange(.running, bytesDone: 77))
        _ = try insert(store, "loose", batch: nil, total: nil)

        let totals = try store.batchTotals(batch)
        #expect(totals.counts == [.completed: 1, .running: 1, .cancelled: 1])
        #expect(totals.bytesDone == 1200)
        #expect(totals.bytesTotal == 1500)

        _ = try insert(store, "unknown", batch: batch, total: nil)
        let unknown = try store.batchTotals(batch)
        #expect(unknown.counts == [.completed: 1, .running: 1, .cancelled: 1, .queued: 1])
        #expect(unknown.bytesDone == 1200)
        #expect(unknown.bytesTotal == nil)

        let batchView = Batch(record: try #require(try store.batchRecord(batch)), counts: unknown.counts,
                              bytesDone: unknown.bytesDone, bytesTotal: unknown.bytesTotal, rate: 10)
        #expect(batchView.state == .running)
        #expect(batchView.jobCount == 4)
        #expect(batchView.etaSeconds == nil)
    }

    @Test func batchTotalsOfAnEmptyBatch() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let batch = try store.createBatch(name: "b", onComplete: nil, onFail: nil, backup: nil).id
        let totals = try store.batchTotals(batch)
        #expect(totals.counts.isEmpty)
        #expect(totals.bytesDone == 0)
        #expect(totals.bytesTotal == 0)
    }

    @Test func aBatchOfOnlyCancelledJobsHasNoUnknownSize() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let batch = try store.createBatch(name: "b", onComplete: nil, onFail: nil, backup: nil).id
        let job = try insert(store, "a", batch: batch, total: nil)
        try store.setState(job.id, StateChange(.cancelled))
        let totals = try store.batchTotals(batch)
        #expect(totals.counts == [.cancelled: 1])
        #expect(totals.bytesTotal == 0)
    }

    @Test func keysAreThoseOfTheBatchOnly() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let batch = try store.createBatch(name: "b", onComplete: nil, onFail: nil, backup: nil).id
        let other = try store.createBatch(name: "o", onComplete: nil, onFail: nil, backup: nil).id
        _ = try insert(store, "1", batch: batch, key: "x")
        _ = try insert(store, "2", batch: batch, key: "y")
        _ = try insert(store, "3", batch: batch, key: nil)
        _ = try insert(store, "4", batch: other, key: "z")
        // The same key in another batch is allowed.
        _ = try insert(store, "5", batch: other, key: "x")
        #expect(try store.keys(inBatch: batch) == ["x", "y"])
        #expect(try store.keys(inBatch: other) == ["z", "x"])
        #expect(try store.keys(inBatch: 999).isEmpty)
        #expect(try store.job(try insert(store, "6", batch: batch, key: "w").id)?.key == "w")
    }

    @Test func aKeyIsUniqueWithinItsBatch() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let batch = try store.createBatch(name: "b", onComplete: nil, onFail: nil, backup: nil).id
        _ = try insert(store, "1", batch: batch, key: "x")
        #expect(throws: (any Error).self) { _ = try insert(store, "2", batch: batch, key: "x") }
        #expect(try store.jobs(batch: batch).count == 1)
    }

    @Test func backupFilesAreRecordedReplacedAndMarkedUploaded() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let target = BackupTarget(directory: "/data", prefix: "http://h/up/")
        let elsewhere = BackupTarget(directory: "/data", prefix: "http://h/other/")
        #expect(try store.backupFile(target, "a.txt") == nil)

        let job = try insert(store, "a", batch: nil)
        try store.recordBackupFile(target, "a.txt", source: SourceFile(path: "/data/a.txt", size: 10, modified: 123),
                                   sha256: "abc", job: job.id)
        let record = try #require(try store.backupFile(target, "a.txt"))
        #expect(record.size == 10)
        #expect(record.modified == 123)
        #expect(record.sha256 == "abc")
        #expect(!record.done)
        #expect(record.jobState == .queued)
        #expect(try store.backupFile(elsewhere, "a.txt") == nil)
        #expect(try store.backupFile(target, "b.txt") == nil)

        try store.markBackupUploaded(job.id)
        #expect(try store.backupFile(target, "a.txt")?.done == true)

        // A new version replaces the row and is not uploaded yet.
        let next = try insert(store, "a2", batch: nil)
        try store.setState(next.id, StateChange(.failed))
        try store.recordBackupFile(target, "a.txt", source: SourceFile(path: "/data/a.txt", size: 20, modified: 456),
                                   sha256: nil, job: next.id)
        let replaced = try #require(try store.backupFile(target, "a.txt"))
        #expect(replaced.size == 20)
        #expect(replaced.modified == 456)
        #expect(replaced.sha256 == nil)
        #expect(!replaced.done)
        #expect(replaced.jobState == .failed)

        // Marking the old job does nothing to the new row.
        try store.markBackupUploaded(job.id)
        #expect(try store.backupFile(target, "a.txt")?.done == false)
    }

    @Test func aBackupFileWhoseJobIsGoneHasNoJobState() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let target = BackupTarget(directory: "/data", prefix: "http://h/up/")
        try store.recordBackupFile(target, "x", source: SourceFile(path: "/data/x", size: 1, modified: 2), sha256: nil,
                                   job: JobID(rawValue: 4242))
        let record = try #require(try store.backupFile(target, "x"))
        #expect(record.jobState == nil)
    }

    @Test func hookRunsOfAJobAndOfABatchAreKeptApart() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let batch = try store.createBatch(name: "b", onComplete: nil, onFail: nil, backup: nil).id
        let job = try insert(store, "a", batch: batch)
        let other = try insert(store, "b", batch: batch)
        let first = HookRun(job: job.id, batch: batch, event: "fail", command: "echo 1", startedAt: Timestamp(rawValue: 10),
                            result: HookResult(exitStatus: 3, output: "out", durationMilliseconds: 12))
        let second = HookRun(job: job.id, batch: batch, event: "complete", command: "echo 2",
                             startedAt: Timestamp(rawValue: 20), result: HookResult(exitStatus: 0))
        let ofOther = HookRun(job: other.id, batch: batch, event: "complete", command: "echo 3",
                              startedAt: Timestamp(rawValue: 30), result: HookResult(signal: 9, timedOut: true))
        let ofBatch = HookRun(job: nil, batch: batch, event: "complete", command: "echo batch",
                              startedAt: Timestamp(rawValue: 40), result: HookResult(startError: "cannot run"))
        let ofOtherBatch = HookRun(job: nil, batch: batch + 1, event: "fail", command: "echo x",
                                   startedAt: Timestamp(rawValue: 50), result: HookResult(exitStatus: 1))
        for run in [first, ofBatch, second, ofOther, ofOtherBatch] { try store.recordHookRun(run) }

        #expect(try store.hookRuns(job: job.id) == [first, second])
        #expect(try store.hookRuns(job: other.id) == [ofOther])
        #expect(try store.hookRuns(batch: batch) == [ofBatch])
        #expect(try store.hookRuns(batch: batch + 1) == [ofOtherBatch])
        #expect(try store.hookRuns(job: JobID(rawValue: 999)).isEmpty)
        #expect(try store.hookRuns(batch: 999).isEmpty)
    }
}
