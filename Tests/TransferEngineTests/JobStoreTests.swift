import Foundation
import Synchronization
import Testing
@testable import TransferEngine

@Suite struct JobStoreTests {
    let directory = TemporaryDirectory()

    func newJob(_ name: String = "a.bin", paused: Bool = false) -> NewJob {
        NewJob(kind: .download, url: "http://127.0.0.1/\(name)", path: directory.file(name),
               headers: ["Authorization: Bearer t"], paused: paused)
    }

    @Test func freshDatabaseIsMigratedOnceAndRecorded() throws {
        let path = directory.database("t.db")
        _ = try JobStore(path: path)
        let connection = try SQLiteConnection(path: path)
        let versions = try connection.query("SELECT version FROM schema_migrations") { $0.int() }
        #expect(versions == embeddedMigrations.map(\.version))
        #expect(try Migrator().migrate(connection).isEmpty)
        let mode = try connection.query("PRAGMA journal_mode") { $0.text() }
        #expect(mode == ["wal"])
    }

    @Test func theDaemonSkipsTheSchemasChecksWhichStillHoldForOtherWriters() throws {
        let path = directory.database("t.db")
        let store = try JobStore(path: path)
        #expect(try store.connection.query("PRAGMA ignore_check_constraints") { $0.int() } == [1])
        let other = try SQLiteConnection(path: path)
        let insert = { (state: String) throws(SQLiteError) in
            try other.execute("""
                INSERT INTO jobs (kind, state, url, max_retries, created_at, updated_at) VALUES ('download', '\(state)', 'u', 0, 0, 0)
                """)
        }
        try insert("queued")
        #expect(throws: SQLiteError.self) { try insert("bogus") }
    }

    @Test func refusesADatabaseFromTheFuture() throws {
        let path = directory.database("future.db")
        _ = try JobStore(path: path)
        let connection = try SQLiteConnection(path: path)
        try connection.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'later', 0)")
        #expect(throws: StoreError.databaseFromFuture(version: 9999, supported: Migrator().latestVersion)) {
            _ = try JobStore(path: path)
        }
    }

    @Test func insertsAndReadsJobsNewestFirst() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let first = try store.insert(newJob("a"), maxRetries: 3, resume: nil)
        let second = try store.insert(newJob("b", paused: true), maxRetries: 3, resume: nil)
        #expect(first.state == .queued)
        #expect(second.state == .paused)
        #expect(second.headers == ["Authorization: Bearer t"])
        #expect(try store.jobs().map(\.id) == [second.id, first.id])
        #expect(try store.jobs(state: .paused).map(\.id) == [second.id])
        #expect(try store.unfinishedJobs().count == 2)
        #expect(try store.countsByState() == [.queued: 1, .paused: 1])
        #expect(try store.job(JobID(rawValue: 999)) == nil)
    }

    @Test func anUploadsResponseIsKeptByteForByte() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let id = try store.insert(newJob("up"), maxRetries: 3, resume: nil).id
        let body: [UInt8] = [0, 1, 0x7f, 0x80, 0xff, 0]  // NULs and bytes that are no UTF-8
        try store.saveResponse(id, UploadResponse(status: 201, headers: ["Location: /u/1"], body: body, truncated: true))
        let kept = try store.response(id)
        #expect(kept?.status == 201)
        #expect(kept?.headers == ["Location: /u/1"])
        #expect(kept?.body == body)
        #expect(kept?.truncated == true)
        try store.saveResponse(id, UploadResponse(status: 200, headers: [], body: [], truncated: false))
        #expect(try store.response(id)?.body == [])
    }

    /// An attempt that failed while being prepared (no descriptor left to open its file) was
    /// never recorded as begun: its end still gives it a row, begun when it ended.
    @Test func anAttemptThatFailedBeforeItBeganIsRecordedWithItsFailure() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        let error = TransferError.io(path: "/x", operation: "create", errno: EMFILE).record
        try store.finishAttempt(job.id, number: 1, httpStatus: nil, error: error, bytes: 0, now: Timestamp(rawValue: 5))
        let attempts = try store.attempts(job.id)
        #expect(attempts.map(\.number) == [1])
        #expect(attempts.first?.error == error)
        #expect(attempts.first?.startedAt == Timestamp(rawValue: 5))
        #expect(attempts.first?.endedAt == Timestamp(rawValue: 5))
    }

    @Test func recordsStateChangesAttemptsAndResumeData() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        let resume = ResumeState(partialPath: job.partialPath!, bytesDurable: 4096,
                                 validators: Validators(etag: "\"e\"", lastModified: nil), bytesTotal: 10_000)
        try store.transaction {
            try store.saveResume(job.id, resume)
            try store.beginAttempt(job.id, number: 1, rangeStart: 0)
        }
        #expect(try store.resumeState(job.id) == resume)
        #expect(try store.job(job.id)?.state == .running)
        #expect(try store.job(job.id)?.bytesDone == 4096)
        try store.finishAttempt(job.id, number: 1, httpStatus: 503, error: TransferError.httpStatus(503).record, bytes: 4096)
        let error = TransferError.httpStatus(404).record
        try store.setState(job.id, StateChange(.failed, reason: "gone", error: error, httpStatus: 404))
        let failed = try #require(try store.job(job.id))
        #expect(failed.state == .failed)
        #expect(failed.error == error)
        #expect(failed.httpStatus == 404)
        #expect(failed.finishedAt != nil)
        let attempts = try store.attempts(job.id)
        #expect(attempts.count == 1)
        #expect(attempts[0].httpStatus == 503)
        #expect(attempts[0].bytes == 4096)
        #expect(attempts[0].endedAt != nil)
        try store.deleteResume(job.id)
        #expect(try store.resumeState(job.id) == nil)
        #expect(try store.integrityCheck() == "ok")
    }

    /// A download's start held on the loop (`HeldStart`) is written with the job's next record:
    /// with its own attempt's end, in the same rewrite of the job's row, its attempt's row made
    /// with the end; with a record that ends no attempt of its, begun first, as it would have been.
    @Test func aHeldStartIsRecordedWithTheJobsNextRecord() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let started = Timestamp(rawValue: 1_000), ended = Timestamp(rawValue: 2_000)
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        var completion = StateRecord(token: 2, id: job.id, change: StateChange(.completed, bytesDone: 10, bytesTotal: 10),
                                     at: ended)
        completion.attempt = AttemptEnd(number: 1, status: 200, bytes: 10)
        completion.heldStart = HeldStart(token: 1, AttemptBegin(id: job.id, number: 1, rangeStart: 0, at: started))
        #expect(completion.heldStart != nil)
        try completion.write(to: store)
        let completed = try #require(try store.job(job.id))
        #expect(completed.state == .completed && completed.attempts == 1 && completed.startedAt == started)
        #expect(completed.finishedAt == ended && completed.bytesDone == 10)
        let attempts = try store.attempts(job.id)
        #expect(attempts.map(\.number) == [1])
        #expect(attempts.first?.startedAt == started && attempts.first?.endedAt == ended)
        #expect(attempts.first?.httpStatus == 200 && attempts.first?.bytes == 10)

        let other = try store.insert(newJob("b.bin"), maxRetries: 3, resume: nil)
        var paused = StateRecord(token: 4, id: other.id, change: StateChange(.paused, reason: "paused by user"), at: ended)
        paused.heldStart = HeldStart(token: 3, AttemptBegin(id: other.id, number: 1, rangeStart: 0, at: started))
        try paused.write(to: store)
        let stopped = try #require(try store.job(other.id))
        #expect(stopped.state == .paused && stopped.attempts == 1 && stopped.startedAt == started)
        #expect(try store.attempts(other.id).map { [$0.number, $0.startedAt == started ? 1 : 0] } == [[1, 1]])
        #expect(try store.integrityCheck() == "ok")
    }

    /// Only a start that records nothing but the state and the attempt's row is held.
    @Test func onlyAStartFromByteZeroWithNothingToResumeIsHeld() {
        let id = JobID(rawValue: 1)
        #expect(HeldStart(token: 1, AttemptBegin(id: id, number: 1, rangeStart: 0, at: .now)) != nil)
        #expect(HeldStart(token: 1, AttemptBegin(id: id, number: 2, rangeStart: 4096, at: .now)) == nil)
        let resume = ResumeState(partialPath: "/x.part", bytesDurable: 0, bytesTotal: 10)
        #expect(HeldStart(token: 1, AttemptBegin(id: id, number: 1, rangeStart: 0, resume: resume, at: .now)) == nil)
        #expect(HeldStart(token: 1, AttemptBegin(id: id, number: 2, rangeStart: 0, startedOver: .foreign, at: .now)) == nil)
    }

    /// A job taken over from the last run reads its plan: a daemon stopped between a finishing
    /// group's mark and the completion that carried the held start left the mark without the
    /// attempt's number, and the next attempt must find it. A job of this run knows it has none.
    @Test func aJobFromTheLastRunReadsItsPlan() throws {
        let jobs = try JobStore(path: directory.database("t.db"))
        let job = try jobs.insert(newJob(), maxRetries: 3, resume: nil)
        let mark = ResumeState(partialPath: job.partialPath!, bytesDurable: 10, bytesTotal: 10, finalizing: true)
        try jobs.saveResume(job.id, mark, updatingProgress: false)
        let store = StoreQueue(jobs)
        let plan = { (fromLastRun: Bool) throws -> AttemptPreparation.Plan in
            let answer = Mutex<Result<AttemptPreparation.Plan, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            AttemptPreparation.Plan.make(job, attempt: 1, at: .now, fromLastRun: fromLastRun, store: store) { result in
                answer.withLock { $0 = result }
                done.signal()
            }
            done.wait()
            return try #require(answer.withLock { $0 }).get()
        }
        #expect(try plan(false).isFirstStart)
        let read = try plan(true)
        #expect(read.resume == mark && !read.isFirstStart)
    }

    /// A download's attempt records its resume state and byte counts with its start, one update
    /// of the job's row; a finishing file's mark records its state and leaves the row alone.
    @Test func anAttemptBeginsWithItsResumeStateAndAFinishingMarkLeavesTheJobRowAlone() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        let start = ResumeState(partialPath: job.partialPath!, bytesDurable: 2048,
                                validators: Validators(etag: "\"e\"", lastModified: nil), bytesTotal: 8192)
        try store.beginAttempt(job.id, number: 1, rangeStart: 2048, resume: start)
        #expect(try store.resumeState(job.id) == start)
        let running = try #require(try store.job(job.id))
        #expect(running.state == .running)
        #expect(running.attempts == 1)
        #expect(running.bytesDone == 2048)
        #expect(running.bytesTotal == 8192)
        #expect(try store.attempts(job.id).map(\.rangeStart) == [2048])
        var finishing = start
        finishing.bytesDurable = 8192
        finishing.finalizing = true
        try store.saveResume(job.id, finishing, updatingProgress: false)
        #expect(try store.resumeState(job.id) == finishing)
        #expect(try store.job(job.id)?.bytesDone == 2048)
    }

    /// Why a job waits is a stored word the scheduler decides on (an offline host is probed
    /// again after a restart), not the text of its reason; it is cleared when the job moves on.
    @Test func aWaitingJobKeepsWhyItWaitsAsAWord() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        try store.beginAttempt(job.id, number: 1, rangeStart: 0)
        try store.setState(job.id, StateChange(.waiting, reason: "a text that says nothing of hosts",
                                               nextAttemptAt: Timestamp(milliseconds: 1), waitReason: .offline))
        #expect(try store.job(job.id)?.waitReason == .offline)
        #expect(try store.unfinishedJobs().first?.waitReason == .offline)
        try store.setState(job.id, StateChange(.queued, reason: "retrying"))
        #expect(try store.job(job.id)?.waitReason == nil)
        try store.setState(job.id, StateChange(.waiting, reason: "offline: reads like one", waitReason: .backoff))
        #expect(try store.job(job.id)?.waitReason == .backoff, "the text decides nothing")
        try store.beginAttempt(job.id, number: 2, rangeStart: 0)
        #expect(try store.job(job.id)?.waitReason == nil)
    }

    @Test func aFailedTransactionLeavesNothingBehind() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try store.transaction {
                try store.setState(job.id, StateChange(.paused))
                try store.transaction { try store.setState(job.id, StateChange(.cancelled)) }
                throw Boom()
            }
        }
        #expect(try store.job(job.id)?.state == .queued)
    }

    @Test func preparationCutsThePartialFileBackToTheCheckpoint() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        let partial = job.partialPath!
        try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: partial))
        try store.saveResume(job.id, ResumeState(partialPath: partial, bytesDurable: 3000,
                                                 validators: Validators(etag: "\"e\""), bytesTotal: 9000))
        guard case .ready(let file, let resume, let startedOver) = try AttemptPreparation.prepare(job, attempt: 1, in: store) else {
            Issue.record("expected a ready attempt"); return
        }
        #expect(startedOver == nil)
        #expect(resume.bytesDurable == 3000)
        #expect(file.size == 3000)
        #expect(resume.file == file.identity, "the start records the file as cut back")
        #expect(try store.attempts(job.id).first?.rangeStart == 3000)
    }

    @Test func aFileAlreadyAsLongAsItsCheckpointIsRecordedAsItIs() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let fresh = try store.insert(newJob(), maxRetries: 3, resume: nil)
        guard case .ready(let created, let start, nil) = try AttemptPreparation.prepare(fresh, attempt: 1, in: store) else {
            Issue.record("expected a ready attempt"); return
        }
        #expect(created.size == 0)
        #expect(created.isUnnamed, "a first start's file has no name: nothing of it is on disk to continue")
        #expect(!FileManager.default.fileExists(atPath: fresh.partialPath!))
        #expect(start.file == created.identity)
        #expect(try store.resumeState(fresh.id) == nil, "nothing to continue: no row until a checkpoint or the finalizing mark")
        #expect(try store.job(fresh.id)?.state == .running)
        #expect(try store.attempts(fresh.id).map(\.number) == [1])

        let stopped = try store.insert(newJob("stopped.bin"), maxRetries: 3, resume: nil)
        let partial = stopped.partialPath!
        try Data(repeating: 7, count: 3000).write(to: URL(fileURLWithPath: partial))
        let left = try PartialFile(path: partial).identity
        try store.saveResume(stopped.id, ResumeState(partialPath: partial, bytesDurable: 3000, validators: Validators(etag: "\"e\""),
                                                     bytesTotal: 9000, file: left, fileWriting: false))
        guard case .ready(let file, let resume, nil) = try AttemptPreparation.prepare(stopped, attempt: 1, in: store) else {
            Issue.record("expected a ready attempt"); return
        }
        #expect(resume.bytesDurable == 3000)
        #expect(!file.isUnnamed, "bytes to continue: the file at its partial path")
        #expect(file.identity == left, "not truncated: the file is as it was left")
        #expect(resume.file == left)
    }

    @Test func preparationNeverExtendsAShorterFile() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        let partial = job.partialPath!
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: partial))
        try store.saveResume(job.id, ResumeState(partialPath: partial, bytesDurable: 3000,
                                                 validators: Validators(etag: "\"e\""), bytesTotal: 9000))
        guard case .ready(let file, let resume, let startedOver) = try AttemptPreparation.prepare(job, attempt: 1, in: store) else {
            Issue.record("expected a ready attempt"); return
        }
        #expect(startedOver == .shortened)
        #expect(try store.attempts(job.id).first?.startedOver == .shortened)
        #expect(resume.bytesDurable == 0)
        #expect(resume.validators == Validators())
        #expect(file.size == 0)
    }

    @Test func preparationDoesNotContinueBytesWithoutValidators() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        let partial = job.partialPath!
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: partial))
        try store.saveResume(job.id, ResumeState(partialPath: partial, bytesDurable: 1000))
        guard case .ready(_, let resume, .noValidator?) = try AttemptPreparation.prepare(job, attempt: 1, in: store) else {
            Issue.record("expected a ready attempt"); return
        }
        #expect(resume.bytesDurable == 0)
    }

    @Test func preparationFinishesAnInterruptedRename() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        let mark = ResumeState(partialPath: job.partialPath!, bytesDurable: 10, bytesTotal: 10, finalizing: true)
        try store.saveResume(job.id, mark, updatingProgress: false)
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: job.path!))
        guard case .alreadyComplete(let resume) = try AttemptPreparation.prepare(job, attempt: 2, in: store) else {
            Issue.record("a renamed file is complete"); return
        }
        // Its completion records the counts: the finalizing mark left the job's row alone.
        #expect(resume == mark)
        try store.setState(job.id, StateChange(.completed, bytesDone: resume.bytesDurable, bytesTotal: resume.bytesTotal))
        #expect(try store.job(job.id).map { [$0.bytesDone, $0.bytesTotal] } == [10, 10])
    }

    /// A finalizing mark knows the file it marked: that file is finished, at either path; another
    /// file put at the partial path or the destination while the daemon was down is not.
    @Test func aFinalizingMarkTrustsOnlyTheFileItMarked() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(newJob(), maxRetries: 3, resume: nil)
        let partial = job.partialPath!
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: partial))
        let marked = try #require(try PartialFile(path: partial).identity)
        let mark = ResumeState(partialPath: partial, bytesDurable: 10, bytesTotal: 10, finalizing: true, file: marked)
        try store.saveResume(job.id, mark, updatingProgress: false)
        guard case .finalize = try AttemptPreparation.prepare(job, attempt: 2, in: store) else {
            Issue.record("the marked file at the partial path is only left to rename"); return
        }

        // Another file in its place at the partial path: not finished, the job starts over.
        try FileManager.default.removeItem(atPath: partial)
        try Data(repeating: 2, count: 10).write(to: URL(fileURLWithPath: partial))
        guard case .ready(_, let fresh, nil) = try AttemptPreparation.prepare(job, attempt: 3, in: store) else {
            Issue.record("another file at the partial path is not the one marked"); return
        }
        #expect(fresh.bytesDurable == 0 && !fresh.finalizing)

        // The marked file renamed into place: complete. Another file there instead: not.
        let other = try store.insert(newJob("other.bin"), maxRetries: 3, resume: nil)
        try Data(repeating: 3, count: 10).write(to: URL(fileURLWithPath: other.partialPath!))
        let otherMarked = try #require(try PartialFile(path: other.partialPath!).identity)
        let otherMark = ResumeState(partialPath: other.partialPath!, bytesDurable: 10, bytesTotal: 10, finalizing: true,
                                    file: otherMarked)
        try store.saveResume(other.id, otherMark, updatingProgress: false)
        #expect(rename(other.partialPath!, other.path!) == 0)
        guard case .alreadyComplete = try AttemptPreparation.prepare(other, attempt: 2, in: store) else {
            Issue.record("the marked file at the destination is complete"); return
        }
        try FileManager.default.removeItem(atPath: other.path!)
        try Data(repeating: 4, count: 10).write(to: URL(fileURLWithPath: other.path!))
        guard case .ready(_, let again, nil) = try AttemptPreparation.prepare(other, attempt: 3, in: store) else {
            Issue.record("another file at the destination is not the one marked"); return
        }
        #expect(again.bytesDurable == 0)
    }
}
