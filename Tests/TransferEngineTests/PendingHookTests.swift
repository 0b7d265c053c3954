import Foundation
import Testing
@testable import TransferEngine

@Suite struct PendingHookTests {
    let directory = TemporaryDirectory()

    private func job(_ state: JobState, onComplete: String? = "c", onFail: String? = "f") -> Job {
        var job = Job(Job.Fields(id: JobID(rawValue: 7), kind: .download, state: state, url: "https://u:secret@h/x", path: "/d/x",
                      headers: [], overwrite: false, priority: .normal, batch: 3, maxRetries: 0, bytesDone: 10,
                      attempts: 1, createdAt: .now, updatedAt: .now))
        job.onComplete = onComplete
        job.onFail = onFail
        job.httpStatus = state == .failed ? 404 : 200
        if state == .failed { job.error = JobError(code: "http_status", message: "HTTP 404") }
        return job
    }

    @Test func aJobRunsTheHookOfTheStateItEndedIn() throws {
        let completed = try #require(PendingHook.forJob(job(.completed)))
        #expect(completed.event == "complete")
        #expect(completed.command == "c")
        #expect(completed.environment["TRANSFERD_JOB_ID"] == "7")
        #expect(completed.environment["TRANSFERD_BATCH_ID"] == "3")
        #expect(completed.environment["TRANSFERD_URL"] == "https://u:<redacted>@h/x")
        #expect(completed.environment["TRANSFERD_ERROR"] == nil)
        let failed = try #require(PendingHook.forJob(job(.failed)))
        #expect(failed.event == "fail")
        #expect(failed.command == "f")
        #expect(failed.environment["TRANSFERD_ERROR_CODE"] == "http_status")
        #expect(failed.environment["TRANSFERD_HTTP_STATUS"] == "404")
        #expect(PendingHook.forJob(job(.cancelled)) == nil)
        #expect(PendingHook.forJob(job(.completed, onComplete: nil)) == nil)
        #expect(completed.key != (try #require(PendingHook.forJob(job(.completed)))).key)
    }

    @Test func aBatchRunsTheHookOfTheStateItEndedIn() throws {
        let record = BatchRecord(id: 2, name: "n", createdAt: .now, onComplete: "c", onFail: "f",
                                 backup: BackupTarget(directory: "/src", prefix: "https://h/p"))
        let counts: [JobState: Int] = [.completed: 2, .failed: 1]
        let failed = try #require(PendingHook.forBatch(record, state: .failed, counts: counts))
        #expect(failed.command == "f")
        #expect(failed.environment["TRANSFERD_JOBS_FAILED"] == "1")
        #expect(failed.environment["TRANSFERD_PATH"] == "/src")
        #expect(PendingHook.forBatch(record, state: .empty, counts: [:])?.command == "c")
        #expect(PendingHook.forBatch(record, state: .cancelled, counts: [.cancelled: 1]) == nil)
        #expect(PendingHook.forBatch(record, state: .running, counts: [.running: 1]) == nil)
    }

    @Test func aDueHookStaysDueUntilItsRunIsRecorded() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let hook = try #require(PendingHook.forJob(job(.completed)))
        try store.addPendingHook(hook)
        #expect(try store.pendingHooks() == [hook])
        let run = HookRun(job: hook.job, batch: hook.batch, event: hook.event, command: hook.command, startedAt: .now,
                          result: HookResult(exitStatus: 0))
        try store.finishHook(hook.key, run)
        #expect(try store.pendingHooks().isEmpty)
        #expect(try store.hookRuns(job: JobID(rawValue: 7)) == [run])
    }

    @Test func batchesAwaitingHooksAreThoseEndedSinceTheirHookLastRan() throws {
        let store = try JobStore(path: directory.database("t.db"))
        func batch(_ name: String, onComplete: String? = "c", onFail: String? = nil, _ states: [JobState]) throws -> Int64 {
            let id = try store.createBatch(name: name, onComplete: onComplete, onFail: onFail, backup: nil).id
            for (index, state) in states.enumerated() {
                var new = NewJob(kind: .download, url: "http://h/\(name)\(index)", path: directory.file("\(name)\(index)"))
                new.batch = id
                let job = try store.insert(new, maxRetries: 0, resume: nil)
                try store.setState(job.id, StateChange(state), now: Timestamp(rawValue: 1000))
            }
            return id
        }
        let ended = try batch("ended", [.completed, .cancelled])
        _ = try batch("running", [.completed, .running])
        _ = try batch("cancelled", [.cancelled])
        _ = try batch("failedWithoutOnFail", [.failed, .completed])
        let failed = try batch("failed", onFail: "f", [.failed])
        _ = try batch("empty", [])
        _ = try batch("noHooks", onComplete: nil, [.completed])
        let ran = try batch("ran", [.completed])
        try store.recordHookRun(HookRun(job: nil, batch: ran, event: "complete", command: "c",
                                        startedAt: Timestamp(rawValue: 2000), result: HookResult(exitStatus: 0)))
        let ranBefore = try batch("ranBeforeTheLastEnd", [.completed])
        try store.recordHookRun(HookRun(job: nil, batch: ranBefore, event: "complete", command: "c",
                                        startedAt: Timestamp(rawValue: 500), result: HookResult(exitStatus: 0)))
        let due = try batch("due", [.completed])
        let record = try #require(try store.batchRecord(due))
        try store.addPendingHook(try #require(PendingHook.forBatch(record, state: .completed, counts: [.completed: 1])))

        #expect(try store.batchesAwaitingHooks() == [ended, failed, ranBefore])
    }
}
