import Testing
@testable import TransferEngine

/// Pruning as the decision core sees it: the store proposes ended jobs, and the core keeps
/// what it still holds, and refuses to take back a job being pruned.
@Suite struct SchedulerCorePruningTests {
    private func candidate(_ id: Int64, batch: Int64? = nil) -> PruneCandidate {
        PruneCandidate(id: JobID(rawValue: id), batch: batch)
    }

    private func pruned(_ driver: CoreDriver, _ token: Int) -> [Int64]? {
        driver.prunes.first { $0.token == token }?.ids.map(\.rawValue)
    }

    @Test func aPruneLeavesEveryJobTheCoreHoldsAndTheJobsOfABatchItHolds() {
        var driver = CoreDriver(maxActive: 1)
        // 1: failed, taken in by a retry that claims its destination: it may run again.
        driver.command(.retry, 1, loaded: makeJob(1, state: .failed))
        // 2: ended in memory, its end not recorded yet (the store may have it already).
        driver.send(.adopted([makeJob(2, kind: .upload)]))
        driver.send(.attemptEnded(JobID(rawValue: 2), makeReport(1, .failed(.httpStatus(404)))))
        #expect(driver.core.ending[JobID(rawValue: 2)] != nil)
        // 3: ended long ago, of batch 9, whose job 4 is still queued.
        driver.send(.adopted([makeJob(4, batch: 9)]))
        // 5: ended long ago, held by nobody.
        driver.send(.prunable(token: 1, [candidate(1), candidate(2), candidate(3, batch: 9), candidate(5), candidate(6, batch: 8)]))
        #expect(pruned(driver, 1) == [5, 6])
        #expect(driver.core.isPruning(JobID(rawValue: 5)) && !driver.core.isPruning(JobID(rawValue: 1)))
    }

    @Test func aJobBeingPrunedCannotBeTakenBackInAndIsProposedOnce() {
        var driver = CoreDriver()
        let failed = makeJob(5, state: .failed)
        driver.send(.prunable(token: 1, [candidate(5)]))
        // A retry that read the job from the store before its deletion: the job is gone.
        let retry = driver.command(.retry, 5, loaded: failed)
        let cancel = driver.command(.cancel, 5, loaded: failed)
        #expect(driver.acks[retry] == .failure(.unknownJob(failed.id)))
        #expect(driver.acks[cancel] == .failure(.unknownJob(failed.id)))
        #expect(driver.claims.isEmpty && driver.records.isEmpty && driver.job(5) == nil)
        // Another prune meanwhile does not delete (or count) it twice.
        driver.send(.prunable(token: 2, [candidate(5), candidate(6)]))
        #expect(pruned(driver, 2) == [6])
        driver.send(.pruned(token: 1))
        driver.send(.pruned(token: 2))
        #expect(driver.core.pruning.isEmpty && driver.core.pruningIDs.isEmpty)
    }

    @Test func theJobsOfABatchWaitUntilItsLastEndIsRecorded() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(2, kind: .upload, batch: 9)]))
        driver.send(.attemptEnded(JobID(rawValue: 2), makeReport(1, .completed)))
        driver.send(.prunable(token: 1, [candidate(1, batch: 9)]))
        #expect(pruned(driver, 1) == [], "the batch's end is not judged yet: its hook must see job 1")
        driver.recordAll()
        #expect(driver.batchEnds == [9])
        driver.send(.prunable(token: 2, [candidate(1, batch: 9), candidate(2, batch: 9)]))
        #expect(pruned(driver, 2) == [1, 2])
    }
}
