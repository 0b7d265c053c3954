import Testing
@testable import TransferEngine

@Suite struct BatchStateTests {
    @Test func noJobsIsEmpty() {
        #expect(BatchState.derive([:]) == .empty)
        #expect(BatchState.derive([.queued: 0, .completed: 0]) == .empty)
        #expect(BatchState.empty.hasEnded)
    }

    @Test func runningWinsOverEverything() {
        let all = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 1) })
        #expect(BatchState.derive(all) == .running)
        #expect(BatchState.derive([.running: 1, .failed: 5, .cancelled: 5]) == .running)
        #expect(BatchState.derive([.running: 1]) == .running)
    }

    @Test func thenQueuedThenWaitingThenPaused() {
        #expect(BatchState.derive([.queued: 1, .waiting: 1, .paused: 1, .failed: 1, .completed: 1]) == .queued)
        #expect(BatchState.derive([.waiting: 1, .paused: 1, .failed: 1, .completed: 1]) == .waiting)
        #expect(BatchState.derive([.paused: 1, .failed: 1, .completed: 1, .cancelled: 1]) == .paused)
        #expect(BatchState.derive([.queued: 2, .running: 0]) == .queued)
        #expect(BatchState.derive([.waiting: 1, .queued: 0]) == .waiting)
        #expect(BatchState.derive([.paused: 3]) == .paused)
    }

    @Test func failedWhenAnyFailedOnceAllEnded() {
        #expect(BatchState.derive([.failed: 1]) == .failed)
        #expect(BatchState.derive([.failed: 1, .completed: 10, .cancelled: 2]) == .failed)
        #expect(BatchState.derive([.failed: 1, .cancelled: 2]) == .failed)
    }

    @Test func cancelledOnlyWhenEveryJobWasCancelled() {
        #expect(BatchState.derive([.cancelled: 3]) == .cancelled)
        #expect(BatchState.derive([.cancelled: 3, .completed: 0, .failed: 0]) == .cancelled)
    }

    @Test func completedOtherwiseIncludingACompletedAndCancelledMix() {
        #expect(BatchState.derive([.completed: 1]) == .completed)
        #expect(BatchState.derive([.completed: 4, .cancelled: 2]) == .completed)
        #expect(BatchState.derive([.completed: 1, .cancelled: 0]) == .completed)
    }

    @Test func onlyTheFinalStatesHaveEnded() {
        #expect(BatchState.completed.hasEnded)
        #expect(BatchState.failed.hasEnded)
        #expect(BatchState.cancelled.hasEnded)
        for state in [BatchState.running, .queued, .waiting, .paused] { #expect(!state.hasEnded, "\(state)") }
    }
}

@Suite struct BatchValueTests {
    private let record = BatchRecord(id: 7, name: "nightly", createdAt: Timestamp(rawValue: 1_700_000_000_000),
                                     onComplete: "echo ok", onFail: "echo bad",
                                     backup: BackupTarget(directory: "/data", prefix: "http://h/up/"))

    @Test func copiesTheRecordAndCountsJobsByState() {
        let batch = Batch(record: record, counts: [.running: 2, .queued: 3, .completed: 1], bytesDone: 10,
                          bytesTotal: 100, rate: 0)
        #expect(batch.id == 7)
        #expect(batch.name == "nightly")
        #expect(batch.createdAt == record.createdAt)
        #expect(batch.onComplete == "echo ok")
        #expect(batch.onFail == "echo bad")
        #expect(batch.backup == record.backup)
        #expect(batch.jobCount == 6)
        #expect(batch.state == .running)
        #expect(batch.bytesDone == 10)
        #expect(batch.bytesTotal == 100)
        #expect(batch.rate == 0)
        // Every state is present, with 0 when none.
        #expect(batch.jobs.count == JobState.allCases.count)
        #expect(batch.jobs == ["queued": 3, "running": 2, "paused": 0, "waiting": 0, "completed": 1, "failed": 0,
                               "cancelled": 0])
    }

    @Test func anEmptyBatchHasZeroJobsAndNoEstimate() {
        let batch = Batch(record: record, counts: [:], bytesDone: 0, bytesTotal: 0, rate: 100)
        #expect(batch.state == .empty)
        #expect(batch.jobCount == 0)
        #expect(batch.jobs.values.allSatisfy { $0 == 0 })
        #expect(batch.etaSeconds == nil)
    }

    @Test func etaIsTheRemainingBytesOverTheRate() {
        let batch = Batch(record: record, counts: [.running: 1], bytesDone: 400, bytesTotal: 1000, rate: 100)
        #expect(batch.etaSeconds == 6)
        let rounded = Batch(record: record, counts: [.running: 1, .queued: 1], bytesDone: 0, bytesTotal: 1050, rate: 100)
        #expect(rounded.etaSeconds == 10)
        let overshot = Batch(record: record, counts: [.running: 1], bytesDone: 1200, bytesTotal: 1000, rate: 100)
        #expect(overshot.etaSeconds == 0)
    }

    @Test func noEstimateWhenTheTotalIsUnknown() {
        let batch = Batch(record: record, counts: [.running: 1], bytesDone: 400, bytesTotal: nil, rate: 100)
        #expect(batch.bytesTotal == nil)
        #expect(batch.etaSeconds == nil)
    }

    @Test func noEstimateWhenNothingMoves() {
        let batch = Batch(record: record, counts: [.queued: 1], bytesDone: 400, bytesTotal: 1000, rate: 0)
        #expect(batch.etaSeconds == nil)
    }

    @Test func noEstimateOnceTheBatchHasEnded() {
        for counts: [JobState: Int] in [[.completed: 2], [.failed: 1, .completed: 1], [.cancelled: 1]] {
            let batch = Batch(record: record, counts: counts, bytesDone: 400, bytesTotal: 1000, rate: 100)
            #expect(batch.state.hasEnded)
            #expect(batch.etaSeconds == nil, "\(counts)")
        }
    }
}
