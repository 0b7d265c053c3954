import Foundation
import Testing
@testable import TransferEngine

/// The store's side of `prune`: which ended jobs it finds, chunk by chunk, and what deleting
/// them takes along (and what it keeps: unfinished jobs, batches still being judged, due hooks,
/// what backups remember).
@Suite struct PruneStoreTests {
    let directory = TemporaryDirectory()
    let now = Timestamp(milliseconds: 1_800_000_000_000)
    let day: Int64 = 86_400_000

    private func days(ago count: Int64) -> Timestamp { now.adding(milliseconds: -count * day) }

    /// A download with one attempt, ended in `state` at `endedAt` (a failed one keeps its resume
    /// data, every one an upload answer and a hook run), or left `state` when it has not ended.
    @discardableResult
    private func job(_ store: JobStore, _ name: String, _ state: JobState, at endedAt: Timestamp? = nil,
                     batch: Int64? = nil) throws -> JobID {
        let at = endedAt ?? now
        let id = try store.insert(NewJob(kind: .download, url: "http://h/\(name)", path: directory.file(name), batch: batch),
                                  maxRetries: 3, resume: nil, now: at.adding(milliseconds: -2000)).id
        try store.beginAttempt(id, number: 1, rangeStart: 0, now: at.adding(milliseconds: -1000))
        try store.saveResume(id, ResumeState(partialPath: directory.file(".\(name).transferd-part"), bytesDurable: 10))
        guard state.hasEnded else {
            if state != .running {
                try store.setState(id, StateChange(state, waitReason: state == .waiting ? .backoff : nil), now: at)
            }
            return id
        }
        try store.finishAttempt(id, number: 1, httpStatus: 200, error: nil, bytes: 10, now: at)
        if state != .failed { try store.deleteResume(id) }
        try store.saveResponse(id, UploadResponse(status: 201, headers: [], body: [], truncated: false))
        try store.setState(id, StateChange(state), now: at)
        try store.recordHookRun(HookRun(job: id, batch: batch, event: "complete", command: "true", startedAt: at,
                                        result: HookResult(exitStatus: 0)))
        return id
    }

    /// Prunes as the scheduler does, chunk after chunk of `limit`, holding nothing in memory.
    @discardableResult
    private func prune(_ store: JobStore, _ criteria: PruneCriteria, limit: Int = 10_000) throws -> (jobs: Int, batches: Int) {
        var cursor: PruneCursor? = PruneCursor()
        var total = (jobs: 0, batches: 0)
        while let at = cursor {
            let (candidates, next) = try store.pruneCandidates(criteria, cutoff: criteria.cutoff(now: now), after: at, limit: limit)
            #expect(candidates.count <= limit)
            let deleted = try store.deletePruned(candidates)
            total = (total.jobs + deleted.jobs, total.batches + deleted.batches)
            cursor = next
        }
        return total
    }

    private func count(_ store: JobStore, _ table: String, _ condition: String = "1") throws -> Int {
        try store.connection.query("SELECT count(*) FROM \(table) WHERE \(condition)") { $0.int() }[0]
    }

    private func ids(_ store: JobStore) throws -> Set<JobID> { Set(try store.jobs(limit: 100_000).map(\.id)) }

    private func assertSound(_ store: JobStore) throws {
        #expect(try store.integrityCheck() == "ok")
        #expect(try store.foreignKeyCheck() == [])
    }

    @Test func deletesEndedJobsWithEveryRowThatBelongsToThemAndNoUnfinishedOne() throws {
        let store = try JobStore(path: directory.database("t.db"))
        for (index, state) in [JobState.completed, .failed, .cancelled].enumerated() {
            try job(store, "ended\(index)", state, at: days(ago: 30))
        }
        var unfinished: Set<JobID> = []
        for (index, state) in [JobState.queued, .running, .paused, .waiting].enumerated() {
            unfinished.insert(try job(store, "open\(index)", state))
        }
        #expect(try count(store, "attempts") == 7)
        #expect(try count(store, "hook_runs") == 3)

        #expect(try prune(store, PruneCriteria()) == (3, 0))
        #expect(try ids(store) == unfinished)
        #expect(try count(store, "attempts") == 4)
        #expect(try count(store, "resume_data") == 4)
        #expect(try count(store, "upload_responses") == 0)
        #expect(try count(store, "hook_runs") == 0)
        try assertSound(store)
        #expect(try prune(store, PruneCriteria()) == (0, 0))
    }

    @Test func keepsACancelledUploadUntilItsServerCopyIsDiscarded() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let cancelled = try job(store, "cancelled", .cancelled, at: days(ago: 30))
        let failed = try job(store, "failed", .failed, at: days(ago: 30))
        try store.saveUploadSession(cancelled, UploadSession(url: "http://h/files/1"))
        try store.saveUploadSession(failed, UploadSession(url: "http://h/files/2"))

        #expect(try prune(store, PruneCriteria()) == (1, 0), "a failed upload goes as any failed job (its server copy is left to expire)")
        #expect(try ids(store) == [cancelled])
        #expect(try store.sessionsToDiscard().map(\.job.id) == [cancelled])
        try store.saveUploadSession(cancelled, nil)  // the server discarded it
        #expect(try prune(store, PruneCriteria()) == (1, 0))
        #expect(try ids(store) == [])
        try assertSound(store)
    }

    @Test func takesOnlyTheStatesAskedForThatEndedBeforeTheCutoffAcrossChunksAndTies() throws {
        let store = try JobStore(path: directory.database("t.db"))
        // Seven completed jobs that ended in the same millisecond: chunks of 2 must take each once.
        let old = try (0..<7).map { try job(store, "old\($0)", .completed, at: days(ago: 8)) }
        let recent = try job(store, "recent", .completed, at: days(ago: 6))
        let failed = try job(store, "failed", .failed, at: days(ago: 9))
        let cancelled = try job(store, "cancelled", .cancelled, at: days(ago: 9))

        let week = try Age.parse("7d", "--older-than")
        #expect(try prune(store, PruneCriteria(states: [.completed], olderThan: week), limit: 2) == (7, 0))
        #expect(try ids(store) == [recent, failed, cancelled])
        #expect(old.allSatisfy { (try? store.job($0)) == .some(nil) })

        #expect(try prune(store, PruneCriteria(states: [.cancelled, .failed], olderThan: week), limit: 1) == (2, 0))
        #expect(try ids(store) == [recent])
        #expect(try prune(store, PruneCriteria(olderThan: week)) == (0, 0))
        #expect(try prune(store, PruneCriteria(olderThan: try Age.parse("5d", "x"))) == (1, 0))
        try assertSound(store)
    }

    @Test func keepsTheJobsOfABatchUntilItHasEndedAndItsHookHasRunAndDeletesAnEmptiedBatch() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let running = try store.createBatch(name: "running", onComplete: nil, onFail: nil, backup: nil).id
        let runningEnded = try job(store, "r1", .completed, at: days(ago: 3), batch: running)
        let runningOpen = try job(store, "r2", .queued, batch: running)
        let hooked = try store.createBatch(name: "hooked", onComplete: "true", onFail: nil, backup: nil).id
        let hookedJob = try job(store, "h1", .completed, at: days(ago: 3), batch: hooked)
        let hookedRecord = try #require(try store.batchRecord(hooked))
        let hook = try #require(PendingHook.forBatch(hookedRecord, state: .completed, counts: [.completed: 1]))
        try store.addPendingHook(hook)
        let done = try store.createBatch(name: "done", onComplete: "true", onFail: nil, backup: nil).id
        try job(store, "d1", .completed, at: days(ago: 3), batch: done)
        try job(store, "d2", .failed, at: days(ago: 3), batch: done)
        try store.recordHookRun(HookRun(job: nil, batch: done, event: "fail", command: "true", startedAt: days(ago: 3),
                                        result: HookResult(exitStatus: 0)))
        let half = try store.createBatch(name: "half", onComplete: nil, onFail: nil, backup: nil).id
        try job(store, "f1", .completed, at: days(ago: 3), batch: half)
        let halfFailed = try job(store, "f2", .failed, at: days(ago: 3), batch: half)
        let empty = try store.createBatch(name: "created, never filled", onComplete: nil, onFail: nil, backup: nil).id
        let ownHook = try job(store, "own", .completed, at: days(ago: 3))
        var endedJob = try #require(try store.job(ownHook))
        endedJob.onComplete = "true"
        try store.addPendingHook(try #require(PendingHook.forJob(endedJob)))

        #expect(try prune(store, PruneCriteria(states: [.completed])) == (2, 0))
        let doneFailed = try #require(try store.jobs(batch: done).first?.id)
        #expect(try ids(store) == [runningEnded, runningOpen, hookedJob, halfFailed, ownHook, doneFailed])
        #expect(try prune(store, PruneCriteria()) == (2, 2))
        #expect(try store.batchRecord(done) == nil)
        #expect(try store.batchRecord(half) == nil)
        #expect(try count(store, "hook_runs", "batch_id = \(done)") == 0)
        #expect(try store.batchRecord(running) != nil)
        #expect(try store.batchRecord(hooked) != nil)
        #expect(try store.batchRecord(empty) != nil, "a batch that never had jobs is not history")
        #expect(try ids(store) == [runningEnded, runningOpen, hookedJob, ownHook])

        // Once the hooks have run, the rest may go.
        try store.finishHook(hook.key, HookRun(job: nil, batch: hooked, event: "complete", command: "true",
                                               startedAt: now, result: HookResult(exitStatus: 0)))
        for pending in try store.pendingHooks() {
            try store.finishHook(pending.key, HookRun(job: pending.job, batch: nil, event: "complete", command: "true",
                                                      startedAt: now, result: HookResult(exitStatus: 0)))
        }
        try store.setState(runningOpen, StateChange(.cancelled), now: now)
        #expect(try prune(store, PruneCriteria()) == (4, 2))
        #expect(try ids(store) == [])
        #expect(try store.batchRecords().map(\.id) == [empty])
        try assertSound(store)
    }

    @Test func aBatchPruneTakesOnlyThatBatchAndABackupStillSkipsWhatItUploaded() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let target = BackupTarget(directory: "/srv/data", prefix: "https://dav.example.com/b")
        let backup = try store.createBatch(name: "backup /srv/data", onComplete: nil, onFail: nil, backup: target).id
        let other = try store.createBatch(name: "other", onComplete: nil, onFail: nil, backup: nil).id
        let uploaded = try job(store, "a.jpg", .completed, at: days(ago: 1), batch: backup)
        let source = SourceFile(path: "/srv/data/a.jpg", size: 1234, modified: 1_700_000_000_000_000_000)
        try store.recordBackupFile(target, "a.jpg", source: source, sha256: nil, job: uploaded)
        try store.markBackupUploaded(uploaded)
        let kept = try job(store, "b", .completed, at: days(ago: 1), batch: other)
        let loose = try job(store, "c", .completed, at: days(ago: 1))

        #expect(try prune(store, PruneCriteria(batch: backup)) == (1, 1))
        #expect(try ids(store) == [kept, loose])
        let record = try #require(try store.backupFile(target, "a.jpg"))
        #expect(record.jobState == nil)
        #expect(BackupDecision.decide(source, sha256: nil, checksum: false, record: record) == .unchanged)
        try assertSound(store)
    }

    @Test func aTableALaterMigrationHangsOnJobsIsEmptiedTooAndForeignKeysAreEnforcedAgain() throws {
        let store = try JobStore(path: directory.database("t.db"))
        try store.connection.execute("CREATE TABLE later (job_id INTEGER NOT NULL REFERENCES jobs (id), note TEXT)")
        let gone = try job(store, "a", .completed, at: days(ago: 1))
        let kept = try job(store, "b", .paused)
        try store.connection.run("INSERT INTO later (job_id, note) VALUES (?, 'x'), (?, 'y')", gone.rawValue, kept.rawValue)
        #expect(try prune(store, PruneCriteria()) == (1, 0))
        #expect(try count(store, "later") == 1)
        try assertSound(store)
        #expect(try store.connection.query("PRAGMA foreign_keys") { $0.int() } == [1])
        #expect(throws: SQLiteError.self) { try store.connection.run("DELETE FROM jobs WHERE id = ?", kept.rawValue) }
        // Inside a transaction the pragma changes nothing: the same deletion, with them enforced.
        try job(store, "c", .failed, at: days(ago: 1))
        #expect(try store.transaction { try prune(store, PruneCriteria()) } == (1, 0))
        try assertSound(store)
    }

    @Test func theDeletionChecksAgainWhatMayGo() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let retried = try job(store, "a", .failed, at: days(ago: 2))
        let (candidates, _) = try store.pruneCandidates(try PruneCriteria(states: [.failed]), cutoff: nil, after: PruneCursor(), limit: 10)
        #expect(candidates.map(\.id) == [retried])
        // Retried between the two steps: no longer history.
        try store.setState(retried, StateChange(.queued), now: now)
        #expect(try store.deletePruned(candidates + [PruneCandidate(id: JobID(rawValue: 999), batch: nil)]) == (0, 0))
        #expect(try store.job(retried)?.state == .queued)
    }

    /// With many ended jobs, a page of `list` and a chunk of `prune` are seeks, never a sort of
    /// every job (1.7 s for a million without jobs_by_state_id).
    @Test func listAndPruneReadThroughTheirIndexes() throws {
        let store = try JobStore(path: directory.database("t.db"))
        func plan(_ sql: String) throws -> String {
            try store.connection.query("EXPLAIN QUERY PLAN " + sql) { row in
                _ = row.int64(); _ = row.int64(); _ = row.int64()
                return row.text()
            }.joined(separator: "; ")
        }
        #expect(try plan(JobStore.jobsQuery(state: false, batch: false)).contains("INTEGER PRIMARY KEY (rowid<?)"))
        #expect(try plan(JobStore.jobsQuery(state: true, batch: false)).contains("jobs_by_state_id (state=? AND id<?)"))
        #expect(try plan(JobStore.jobsQuery(state: false, batch: true)).contains("jobs_by_batch (batch_id=? AND id<?)"))
        let pruning = try plan(JobStore.candidatesQuery)
        #expect(pruning.contains("jobs_by_end (state=? AND finished_at>? AND finished_at<?)"), "\(pruning)")
        #expect(!pruning.contains("TEMP B-TREE"), "\(pruning)")
        #expect(try plan(JobStore.candidatesInBatchQuery([.completed, .failed])).contains("jobs_by_batch (batch_id=? AND id>?)"))
        for sql in [JobStore.jobsQuery(state: true, batch: true), JobStore.jobsQuery(state: false, batch: false)] {
            #expect(try !plan(sql).contains("TEMP B-TREE"))
        }
    }
}
