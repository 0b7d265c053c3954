import Testing
@testable import TransferEngine

/// The scheduler's decisions, fed as events to the decision core and read back as actions:
/// no sockets, curl, files, store or threads.
@Suite struct SchedulerCoreTests {
    // MARK: Starting work

    @Test func aRestartQueuesTheJobsThatWereRunningAndStartsThemFromTheirCheckpoint() {
        var driver = CoreDriver(maxActive: 1)
        driver.send(.restarted([makeJob(1, state: .running, attempts: 2, bytesDone: 300), makeJob(2)]))
        let requeued = driver.records.first { $0.id.rawValue == 1 && $0.change.state == .queued }
        #expect(requeued?.change.reason == "daemon restarted")
        #expect(driver.startedIDs() == [1], "the older job first, one slot")
        #expect(driver.started.first?.attempt == 3)
        #expect(driver.job(1)?.bytesDone == 300, "it continues from what it kept")
    }

    @Test func noMoreRunThanMaxActiveAndTheNextStartsWhenOneEnds() {
        var driver = CoreDriver(maxActive: 2)
        for id in 1...5 { driver.send(.adopted([makeJob(Int64(id), kind: .upload)])) }
        #expect(driver.startedIDs() == [1, 2])
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .completed)))
        #expect(driver.core.jobs[JobID(rawValue: 1)] == nil && driver.core.ending[JobID(rawValue: 1)] != nil,
                "ended, its end on its way")
        #expect(driver.startedIDs() == [1, 2, 3], "the slot is free as soon as the job ended")
    }

    @Test func aHostGetsNoMoreThanMaxPerHost() {
        var driver = CoreDriver(maxActive: 4, maxPerHost: 1)
        driver.send(.adopted([makeJob(1, host: "a")]))
        driver.send(.adopted([makeJob(2, host: "a")]))
        driver.send(.adopted([makeJob(3, host: "b")]))
        #expect(driver.startedIDs() == [1, 3])
        #expect(driver.state(2) == .queued)
    }

    @Test func higherPriorityStartsFirst() {
        var driver = CoreDriver(maxActive: 1)
        driver.send(.restarted([makeJob(1, priority: .low), makeJob(2, priority: .normal), makeJob(3, priority: .high)]))
        #expect(driver.startedIDs() == [3])
    }

    @Test func aManifestsJobsAreTakenInTogetherSoItsHighJobsStartFirstWithoutPreempting() {
        var driver = CoreDriver(maxActive: 2)
        driver.send(.adopted([makeJob(1, priority: .low), makeJob(2, priority: .low), makeJob(3, priority: .high),
                              makeJob(4, priority: .normal)]))
        #expect(driver.startedIDs() == [3, 4], "the best of them, not the first of them")
        #expect(driver.stops.isEmpty, "nothing started only to give its slot away")
        #expect(driver.state(1) == .queued && driver.state(2) == .queued)
    }

    @Test func aHighJobTakesTheSlotOfTheNewestLowJobWhichIsQueuedAgainWithItsBytes() {
        var driver = CoreDriver(maxActive: 2)
        driver.send(.adopted([makeJob(1, priority: .low)]))
        driver.send(.adopted([makeJob(2, priority: .low)]))
        driver.send(.adopted([makeJob(3, priority: .high)]))
        #expect(driver.stops == [JobID(rawValue: 2)], "the most recently started low job")
        #expect(driver.startedIDs() == [1, 2], "the high job waits for the slot")
        driver.send(.stopped(JobID(rawValue: 2), makeReport(1, .completed, kept: 4096, id: 2)))
        let suspended = driver.lastRecord(of: 2)
        #expect(suspended?.change.state == .queued)
        #expect(suspended?.change.reason == "preempted by job 3 (high priority)")
        #expect(suspended?.change.bytesDone == 4096 && suspended?.partial == .sync)
        #expect(driver.startedIDs() == [1, 2, 3])
        #expect(driver.stops.count == 1, "one preemption at a time, and the low job waits its turn")
    }

    // MARK: Commands

    @Test func pausingARunningJobStopsItThenRecordsItsDurableBytesAndOnlyThenAcknowledges() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        let ack = driver.command(.pause, 1)
        #expect(driver.stops == [JobID(rawValue: 1)])
        #expect(driver.state(1) == .running, "running until its transfer has stopped")
        driver.send(.stopped(JobID(rawValue: 1), makeReport(1, .completed, kept: 2048)))
        let paused = driver.lastRecord(of: 1)
        #expect(paused?.change.state == .paused && paused?.change.bytesDone == 2048)
        #expect(paused?.partial == .sync, "the bytes are made durable before the record")
        #expect(paused?.attempt?.number == 1 && paused?.attempt?.error == nil)
        #expect(paused?.awaited == true, "its command's answer waits for it: no gathering window")
        #expect(driver.acks[ack] == nil, "not acknowledged before it is recorded")
        driver.recordAll()
        #expect((try? driver.acks[ack]?.get())?.state == .paused)
    }

    @Test func aCommandTheStoreCannotRecordIsRefusedAndMayBeGivenAgain() {
        var driver = CoreDriver()
        driver.send(.restarted([makeJob(1, state: .paused)]))
        let ack = driver.command(.resume, 1)
        driver.recordNext(failing: true)
        guard case .failure(.notRecorded(.resume, _, _))? = driver.acks[ack] else {
            Issue.record("expected notRecorded, got \(String(describing: driver.acks[ack]))")
            return
        }
    }

    @Test func pausingAQueuedJobNeedsNoStop() {
        var driver = CoreDriver(maxActive: 1)
        driver.send(.adopted([makeJob(1)]))
        driver.send(.adopted([makeJob(2)]))
        driver.command(.pause, 2)
        #expect(driver.stops.isEmpty && driver.state(2) == .paused)
    }

    @Test func cancellingARunningDownloadRemovesItsPartialFileBeforeTheRecord() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        driver.command(.cancel, 1)
        driver.send(.stopped(JobID(rawValue: 1), makeReport(1, .completed, kept: 10)))
        let cancelled = driver.lastRecord(of: 1)
        #expect(cancelled?.change.state == .cancelled)
        #expect(cancelled?.partial == .remove(makeJob(1).partialPath!) && cancelled?.resume == .delete)
    }

    @Test func commandsAJobsStateDoesNotAllowAreRefusedWithTheirReason() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        let resume = driver.command(.resume, 2, loaded: makeJob(2, state: .completed))
        let unknown = driver.command(.pause, 9)
        var quarantined = makeJob(3, state: .failed)
        quarantined.error = JobError(code: InvalidJob.code, message: "max_retries is out of range")
        let retry = driver.command(.retry, 3, loaded: quarantined)
        #expect(driver.acks[resume] == .failure(.notAllowed(.resume, JobID(rawValue: 2), .completed)))
        #expect(driver.acks[unknown] == .failure(.unknownJob(JobID(rawValue: 9))))
        #expect(driver.acks[retry] == .failure(.quarantined(JobID(rawValue: 3), reason: "max_retries is out of range")))
    }

    @Test func pausingAPausedJobOrResumingAQueuedOrRunningOneChangesNothing() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        driver.send(.adopted([makeJob(2, state: .paused)]))
        let records = driver.records.count
        let resumeRunning = driver.command(.resume, 1)
        let pausePaused = driver.command(.pause, 2)
        #expect(driver.acks[resumeRunning] == .failure(.unchanged(.resume, JobID(rawValue: 1), .running)))
        #expect(driver.acks[pausePaused] == .failure(.unchanged(.pause, JobID(rawValue: 2), .paused)))
        #expect(driver.records.count == records, "nothing recorded")
        // A running job with a pause under way is not where a resume would leave it.
        driver.command(.pause, 1)
        let resumeStopping = driver.command(.resume, 1)
        #expect(driver.acks[resumeStopping] == .failure(.notAllowed(.resume, JobID(rawValue: 1), .running)))
    }

    @Test func retryingAFailedDownloadClaimsItsDestinationFirst() {
        var driver = CoreDriver()
        let failed = makeJob(1, state: .failed, attempts: 4)
        let ack = driver.command(.retry, 1, loaded: failed)
        #expect(driver.claims == [JobID(rawValue: 1)] && driver.records.isEmpty)
        driver.send(.destinationClaimed(failed.id, .success(())))
        #expect(driver.startedIDs() == [1] && driver.started.first?.attempt == 5)
        driver.recordAll()
        #expect((try? driver.acks[ack]?.get()) != nil)

        let other = makeJob(2, state: .failed)
        let refused = driver.command(.retry, 2, loaded: other)
        let taken = DestinationRefusal.taken(path: "/d/f2", owner: JobID(rawValue: 7))
        driver.send(.destinationClaimed(other.id, .failure(.destination(taken))))
        #expect(driver.acks[refused] == .failure(.destination(taken)))
        #expect(driver.job(2) == nil, "it stays failed, out of memory")
    }

    @Test func aCancelWhileARetryClaimsTheDestinationWinsAndTheRetryIsRefused() {
        var driver = CoreDriver()
        let failed = makeJob(1, state: .failed)
        let retry = driver.command(.retry, 1, loaded: failed)
        let again = driver.command(.retry, 1, loaded: failed)
        #expect(driver.claims.count == 1, "one claim for both retries")
        let cancel = driver.command(.cancel, 1, loaded: failed)
        #expect(driver.lastRecord(of: 1)?.change.state == .cancelled)
        driver.send(.destinationClaimed(failed.id, .success(())))
        driver.recordAll()
        #expect(driver.acks[retry] == .failure(.notAllowed(.retry, failed.id, .cancelled)))
        #expect(driver.acks[again] == .failure(.notAllowed(.retry, failed.id, .cancelled)))
        #expect((try? driver.acks[cancel]?.get())?.state == .cancelled)
        #expect(driver.started.isEmpty)
    }

    // MARK: Failed attempts

    @Test func aRetryAfterLongerThanTheBackoffSetsTheDueTimeAndTheTimer() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        driver.recordNext()
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .failed(.httpStatus(503)), kept: 0, retryAfter: 60_000)))
        let due = driver.now.adding(milliseconds: 60_000)
        #expect(driver.state(1) == .waiting && driver.job(1)?.waitReason == .backoff)
        #expect(driver.job(1)?.nextAttemptAt == due)
        #expect(driver.retryTimer == due)
        #expect(driver.published.contains { $0.type == .retryScheduled && $0.nextAttemptAt == due })
        driver.advance(milliseconds: 59_000)
        driver.send(.retryDue)
        #expect(driver.state(1) == .waiting, "not before its time")
        driver.advance(milliseconds: 1_000)
        driver.send(.retryDue)
        #expect(driver.started.count == 2 && driver.started.last?.attempt == 2)
    }

    @Test func offlineJobsShareOneProbeAndAllGoBackWhenTheHostAnswers() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1, host: "gone")]))
        driver.send(.adopted([makeJob(2, host: "gone")]))
        for id in [Int64(1), 2] {
            driver.send(.attemptEnded(JobID(rawValue: id), makeReport(1, .failed(.unreachable("refused")), kept: 0, id: id)))
        }
        #expect(driver.state(1) == .waiting && driver.job(2)?.waitReason == .offline)
        #expect(driver.probes == ["http://gone:8080/f1"], "one probe for the host")
        driver.send(.hostAnswered("http://gone:8080"))
        #expect(driver.started.filter { $0.attempt == 2 }.count == 2)
    }

    @Test func waitingForAnUnreachableHostUsesUpNoRetry() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1, host: "gone", maxRetries: 1)]))
        for attempt in 1...5 {
            driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(attempt, .failed(.unreachable("refused")), kept: 0)))
            #expect(driver.state(1) == .waiting, "attempt \(attempt)")
            driver.send(.hostAnswered("http://gone:8080"))
        }
    }

    @Test func aFailedPreparationNeverRemovesThePartialFile() {
        // Another daemon's lock on the partial file fails the attempt before any transfer.
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1, maxRetries: 0)]))
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .failed(.busy(path: "/d/f1.part")))))
        let failed = driver.lastRecord(of: 1)
        #expect(failed?.change.state == .failed)
        #expect(failed?.partial == StateRecord.PartialFileStep.none, "the file is not this attempt's")
    }

    @Test func aFailedDownloadThatKeptNothingLeavesNoEmptyFile() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1, maxRetries: 0)]))
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .failed(.httpStatus(404)), kept: 0)))
        #expect(driver.lastRecord(of: 1)?.partial == .remove(makeJob(1).partialPath!))
    }

    @Test func aBodyPastMaxFilesizeDiscardsItsBytes() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .failed(.tooLarge(limit: 10)), kept: 8)))
        let record = driver.lastRecord(of: 1)
        #expect(record?.change.state == .failed && record?.change.bytesDone == 0)
        #expect(record?.resume == .delete && record?.partial == .remove(makeJob(1).partialPath!))
    }

    @Test func aChangedEntityStartsOverFromZeroWithItsResumeDataReset() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .startOver(reason: "the ETag changed"), kept: 700)))
        let record = driver.records.first { $0.id.rawValue == 1 && $0.change.state == .queued }
        #expect(record?.change.bytesDone == 0)
        #expect(record?.resume == .save(ResumeState(partialPath: "/d/f1.part")))
        #expect(record?.attempt?.error?.code == "source_changed")
        #expect(driver.started.last?.attempt == 2, "and starts again")
    }

    @Test func aStalledTransferIsStoppedAndItsAttemptFailsAsStalled() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        let id = JobID(rawValue: 1)
        driver.send(.tick([.init(id: id, attempt: 1, idleSeconds: 61, throttled: true, stallSeconds: 60)]))
        #expect(driver.stops.isEmpty, "held back by a limit is not a stall")
        driver.send(.tick([.init(id: id, attempt: 1, idleSeconds: 59, throttled: false, stallSeconds: 60)]))
        #expect(driver.stops.isEmpty)
        driver.send(.tick([.init(id: id, attempt: 1, idleSeconds: 61, throttled: false, stallSeconds: 60)]))
        #expect(driver.stops == [id])
        driver.send(.stopped(id, makeReport(1, .completed, kept: 100)))
        let record = driver.lastRecord(of: 1)
        #expect(record?.change.state == .waiting && record?.attempt?.error?.code == "stalled")
        #expect(record?.resume == .save(makeReport(1, .completed, kept: 100).resume!))
    }

    @Test func aTricklingTransferIsStoppedAndWaitsToTryAgain() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        let id = JobID(rawValue: 1)
        // A byte every 59 s: never idle for the stall time, but far below the speed limit.
        driver.send(.tick([.init(id: id, attempt: 1, idleSeconds: 30, throttled: false, stallSeconds: 60, tooSlow: (100, 60))]))
        #expect(driver.stops == [id])
        driver.send(.stopped(id, makeReport(1, .completed, kept: 3)))
        let record = driver.lastRecord(of: 1)
        #expect(record?.change.state == .waiting && record?.attempt?.error?.code == "stalled")
        #expect(record?.attempt?.error?.message.contains("slower than 100 bytes/s for 60 s") == true)
    }

    @Test func aSpeedWindowJudgesOnlyAWholeWindowNotHeldBackByALimit() {
        var window = SpeedWindow(seconds: 3)
        window.record(10, held: false)
        window.record(10, held: false)
        #expect(!window.isBelow(100), "not a whole window yet")
        window.record(10, held: false)
        #expect(window.isBelow(100) && !window.isBelow(10) && !window.isBelow(0))
        window.record(10, held: true)
        #expect(!window.isBelow(100), "a second held back by a limit is not the attempt's speed")
        for _ in 0..<3 { window.record(1000, held: false) }
        #expect(!window.isBelow(100))
        for _ in 0..<3 { window.record(0, held: false) }
        #expect(window.isBelow(1), "the oldest seconds leave the window")
    }

    @Test func anAttemptsEventsWaitUntilItsStartIsRecorded() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        let id = JobID(rawValue: 1)
        driver.send(.launched(TransferEvent(.attemptStarted, job: id)))
        driver.send(.attemptEnded(id, makeReport(1, .failed(.network("reset")), kept: 0)))
        let kinds = { (driver: CoreDriver) in driver.published.filter { $0.job == id && $0.type != .jobCreated }.map(\.type) }
        #expect(kinds(driver).isEmpty, "nothing of the attempt before its start is recorded")
        driver.recordNext()
        #expect(kinds(driver) == [.state, .attemptStarted, .attemptFinished, .retryScheduled])
        #expect(driver.published.first { $0.job == id && $0.type == .state }?.state == .running)
        driver.recordNext()
        #expect(kinds(driver).last == .state && driver.published.last?.state == .waiting)
        driver.send(.launched(TransferEvent(.attemptStarted, job: id)))
        #expect(driver.published.last?.type == .attemptStarted, "a recorded start holds nothing back")
    }

    @Test func aStartTheStoreCannotRecordFailsTheAttemptThatTransfersMeanwhile() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        let id = JobID(rawValue: 1)
        driver.recordNext(failing: true)
        #expect(driver.stops == [id])
        driver.send(.stopped(id, makeReport(1, .completed, kept: 0)))
        let record = driver.lastRecord(of: 1)
        #expect(record?.change.state == .failed && record?.attempt?.error?.code == "io", "as when it could not be opened")
        #expect(record?.attempt?.error?.message.contains("record the attempt: disk full") == true)
    }

    @Test func aStartTheStoreCannotRecordLetsAnAttemptThatAlreadyEndedBe() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        let id = JobID(rawValue: 1)
        driver.send(.attemptEnded(id, makeReport(1, .completed, kept: 10)))
        driver.recordNext(failing: true)
        #expect(driver.stops.isEmpty, "finishing: the file's own records say whether it completes")
        driver.send(.finalized(id, makeReport(1, .completed, kept: 10), .success(10)))
        #expect(driver.lastRecord(of: 1)?.change.state == .completed)
    }

    // MARK: Finishing

    @Test func aDownloadBeingMadeDurableGivesItsSlotToTheNextButNoMoreThanMaxFinishingBesideTheSlots() {
        var driver = CoreDriver(maxActive: 1)
        let all = Int64(1 + driver.core.admission.maxFinishing)
        for id in 1...all + 1 { driver.send(.adopted([makeJob(id)])) }
        #expect(driver.startedIDs() == [1])
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .completed, kept: 10)))
        #expect(driver.state(1) == .running && driver.finalizes.count == 1, "still running while its file is synced")
        #expect(driver.job(1)?.bytesDone == 10, "shown with every byte while it is synced")
        #expect(driver.startedIDs() == [1, 2], "its slot went to the next job")
        for id in 2...all { driver.send(.attemptEnded(JobID(rawValue: id), makeReport(1, .completed, kept: 10, id: id))) }
        #expect(driver.startedIDs() == Array(1...all), "\(all) files being finished already: the slot and 31 beside it")
        driver.send(.finalized(JobID(rawValue: 1), makeReport(1, .completed, kept: 10), .success(10)))
        #expect(driver.state(1) == .completed)
        #expect(driver.startedIDs() == Array(1...all + 1))
    }

    /// The completion travels with the file: the finishing group records it with the rename, and
    /// the core applies it as written, with no record of its own.
    @Test func aCompletionRecordedWithItsFileIsAppliedAsWritten() throws {
        var (driver, id, report) = finishingJob()
        driver.recordNext()
        var written = try #require(driver.completions.last ?? nil, "the finalize action carries the completion")
        #expect(written.change.state == .completed && written.change.bytesDone == 1000 && written.resume == .delete)
        #expect(written.attempt == report.record(error: nil))
        #expect(driver.state(1) == .running, "nothing changes until it is written")
        let records = driver.records.count
        written.at = Timestamp(milliseconds: driver.now.rawValue + 7)
        driver.send(.finalized(id, report, .success(1000), recorded: RecordedCompletion(record: written)))
        #expect(driver.records.count == records, "no record of its own")
        #expect(driver.core.job(id) == nil, "ended and recorded: forgotten")
        let completed = try #require(driver.published.last { $0.type == .state && $0.state == .completed })
        #expect(completed.job == id && completed.bytesDone == 1000)
        #expect(driver.actions.contains { if case .endRecorded(id) = $0 { true } else { false } })
    }

    @Test func aCompletionRecordedWithItsFileCarriesTheHookItMakesDueAndRunsIt() throws {
        var driver = CoreDriver()
        var job = makeJob(1)
        job.onComplete = "notify-send done"
        driver.send(.adopted([job]))
        let id = JobID(rawValue: 1)
        let report = makeReport(1, .completed, kept: 1000)
        driver.send(.attemptEnded(id, report))
        driver.recordNext()
        let written = try #require(driver.completions.last ?? nil)
        let hook = try #require(written.hook, "recorded with the completion, so it runs even if the daemon stops")
        #expect(hook.event == "complete" && hook.command == "notify-send done" && hook.environment["TRANSFERD_BYTES"] == "1000")
        driver.send(.finalized(id, report, .success(1000), recorded: RecordedCompletion(record: written)))
        #expect(driver.hooks.map(\.key) == [hook.key], "run once recorded")
    }

    @Test func aCompletionItsFinishingGroupCouldNotRecordIsLoggedAsSuch() throws {
        var (driver, id, report) = finishingJob()
        driver.recordNext()
        let written = try #require(driver.completions.last ?? nil)
        let actions = driver.send(.finalized(id, report, .success(1000), recorded: RecordedCompletion(record: written, error: "disk full")))
        #expect(actions.contains { if case .log(.error, let line) = $0 { line.contains("cannot record completed: disk full") } else { false } })
    }

    @Test func aPauseDuringFinalizeWaitsForItAndTheJobCompletes() {
        var (driver, id, report) = finishingJob()
        #expect(driver.finalizes.count == 1)
        let ack = driver.command(.pause, 1)
        #expect(driver.stops.isEmpty && driver.state(1) == .running, "a file being renamed is not stopped halfway")
        driver.send(.finalized(id, report, .success(1000)))
        #expect(driver.lastRecord(of: 1)?.change.state == .completed)
        #expect(driver.acks[ack] == .failure(.notAllowed(.pause, id, .completed)))
    }

    @Test func aPauseDuringAFinalizeThatFailsLeavesTheJobPausedWithItsBytes() {
        var (driver, id, report) = finishingJob()
        let ack = driver.command(.pause, 1)
        driver.send(.finalized(id, report, .failure(.io(path: "/d", operation: "rename", errno: 28))))
        #expect(driver.lastRecord(of: 1)?.change.state == .paused)
        driver.recordAll()
        #expect((try? driver.acks[ack]?.get())?.state == .paused)
    }

    @Test func aFinalizeShortOfDescriptorsKeepsTheBytesAndTriesAgain() {
        var (driver, id, report) = finishingJob()
        driver.send(.finalized(id, report, .failure(.fdShortage("cannot open the directory /d"))))
        let record = driver.lastRecord(of: 1)
        #expect(record?.change.state == .waiting && record?.change.waitReason == .descriptors)
        #expect(record?.resume == .save(report.resume!) && record?.partial == .sync, "its bytes are kept for the next attempt")
        #expect(driver.job(1)?.bytesDone == 1000)
    }

    @Test func aFullDiskAtTheFinishPausesTheJobAsAnAttemptsWriteWould() {
        var (driver, id, report) = finishingJob()
        driver.send(.finalized(id, report, .failure(.diskFull(path: "/d/.f.transferd-part"))))
        let record = driver.lastRecord(of: 1)
        #expect(record?.change.state == .paused && record?.change.reason?.contains("disk full") == true)
        #expect(record?.resume == .save(report.resume!) && record?.partial == .sync, "its bytes are kept for a resume")
    }

    @Test func aChecksumMismatchDiscardsTheBytesEvenWithACancelPending() {
        var (driver, id, report) = finishingJob()
        let ack = driver.command(.cancel, 1)
        driver.send(.finalized(id, report, .failure(.checksumMismatch(expected: "a", actual: "b"))))
        let record = driver.lastRecord(of: 1)
        #expect(record?.change.state == .failed && record?.change.bytesDone == 0 && record?.resume == .delete)
        #expect(driver.acks[ack] == .failure(.notAllowed(.cancel, id, .failed)))
    }

    @Test func theLateEndOfAnAttemptThatWasPausedIsIgnored() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1)]))
        let id = JobID(rawValue: 1)
        driver.command(.pause, 1)
        driver.send(.stopped(id, nil))  // it had no transfer yet (still preparing)
        #expect(driver.state(1) == .paused)
        let before = driver.actions.count
        driver.send(.attemptEnded(id, makeReport(1, .failed(.network("reset")))))
        driver.send(.finalized(id, makeReport(1, .completed), .success(5)))
        #expect(driver.actions.count == before, "nothing follows")
        #expect(driver.state(1) == .paused)
    }

    // MARK: Ends, batches, waits, hooks

    @Test func aLoneJobsCompletionIsAnInfoLineAndABatchJobsADebugLine() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1), makeJob(2, batch: 7), makeJob(3, kind: .upload), makeJob(4, kind: .upload, batch: 7)]))
        driver.recordAll()
        for id in [1, 2] as [Int64] {
            let report = makeReport(1, .completed, kept: 1000, id: id)
            driver.send(.attemptEnded(JobID(rawValue: id), report))
            driver.send(.finalized(JobID(rawValue: id), report, .success(1000)))
        }
        for id in [3, 4] as [Int64] {
            driver.send(.attemptEnded(JobID(rawValue: id), makeReport(1, .completed, id: id)))
        }
        func level(of id: Int64) -> Logger.Level? {
            driver.actions.lazy.compactMap { action -> Logger.Level? in
                guard case .log(let level, let line) = action, line.hasPrefix("job \(id): completed") else { return nil }
                return level
            }.first
        }
        #expect(level(of: 1) == .info && level(of: 3) == .info)
        #expect(level(of: 2) == .debug && level(of: 4) == .debug, "the batch's end says it")
    }

    @Test func aBatchsEndLineCountsItsJobsByState() {
        #expect(Scheduler.describe([.completed: 2000]) == "2000 completed")
        #expect(Scheduler.describe([.cancelled: 1, .failed: 10, .completed: 1989]) == "1989 completed, 10 failed, 1 cancelled")
        #expect(Scheduler.describe([:]) == "no jobs")
    }

    @Test func aBatchEndsOnceWhenItsLastEndIsRecordedInWhateverOrderTheyArrive() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1, kind: .upload, batch: 7)]))
        driver.send(.adopted([makeJob(2, kind: .upload, batch: 7)]))
        driver.recordAll()
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .completed)))
        driver.send(.attemptEnded(JobID(rawValue: 2), makeReport(1, .failed(.httpStatus(403)))))
        #expect(driver.unrecorded.count == 2)
        driver.recordAt(1)  // the second end first
        #expect(driver.batchEnds.isEmpty)
        driver.recordAt(0)
        #expect(driver.batchEnds == [7])
        driver.recordAll()
        #expect(driver.batchEnds == [7])
    }

    @Test func aWaitIsAnsweredWhenTheLastOfItsJobsEndIsRecorded() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1, kind: .upload)]))
        driver.send(.adopted([makeJob(2, kind: .upload)]))
        driver.recordAll()
        driver.send(.wait(token: 50, owner: 1, ids: [JobID(rawValue: 1), JobID(rawValue: 2)], ended: []))
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .completed)))
        #expect(driver.lastRecord(of: 1)?.awaited == false, "the wait still needs job 2: this end may gather")
        driver.recordAll()
        #expect(driver.answers[50] == nil)
        driver.send(.attemptEnded(JobID(rawValue: 2), makeReport(1, .completed)))
        #expect(driver.lastRecord(of: 2)?.awaited == true, "the wait's last job: committed at once")
        #expect(driver.answers[50] == nil, "not before the end is recorded")
        driver.recordAll()
        #expect(driver.answers[50]?.map(\.id.rawValue) == [1, 2])
    }

    @Test func aWaitForJobsThatEndedIsAnsweredAtOnceAndADroppedOneNever() {
        var driver = CoreDriver()
        let done = makeJob(1, state: .completed)
        driver.send(.wait(token: 1, owner: 1, ids: [done.id], ended: [done]))
        #expect(driver.answers[1]?.map(\.id) == [done.id])
        driver.send(.adopted([makeJob(2, kind: .upload)]))
        driver.send(.wait(token: 2, owner: 9, ids: [JobID(rawValue: 2)], ended: []))
        driver.send(.waitsDropped(owner: 9))
        driver.send(.attemptEnded(JobID(rawValue: 2), makeReport(1, .completed)))
        driver.recordAll()
        #expect(driver.answers[2] == nil)
    }

    @Test func aJobsHookIsRecordedWithItsEndAndRunsOnlyOnceRecorded() {
        var driver = CoreDriver()
        driver.send(.adopted([makeJob(1, kind: .upload, onComplete: "true")]))
        driver.recordAll()
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .completed)))
        #expect(driver.lastRecord(of: 1)?.hook?.event == "complete")
        #expect(driver.hooks.isEmpty)
        driver.recordAll()
        #expect(driver.hooks.map(\.event) == ["complete"])
    }

    @Test func hooksDueAfterARestartRunAFewAtATime() {
        var driver = CoreDriver(maxHooks: 2)
        let due = (1...5).map { PendingHook(key: "k\($0)", job: JobID(rawValue: Int64($0)), batch: nil, event: "complete",
                                            command: "true", environment: [:]) }
        driver.send(.hooksDue(due, batches: [3]))
        #expect(driver.hooks.map(\.key) == ["k1", "k2"])
        #expect(driver.batchEnds == [3], "a batch that ended just before the stop is judged again")
        driver.send(.hookFinished)
        #expect(driver.hooks.map(\.key) == ["k1", "k2", "k3"])
    }

    @Test func aShutdownStopsRunningJobsQueuesThemAgainAndStartsNothing() {
        var driver = CoreDriver(maxActive: 1)
        driver.send(.adopted([makeJob(1)]))
        driver.send(.adopted([makeJob(2)]))
        driver.recordAll()
        driver.send(.shutdown)
        #expect(driver.stops == [JobID(rawValue: 1)] && !driver.shutdownComplete)
        driver.send(.stopped(JobID(rawValue: 1), makeReport(1, .completed, kept: 64)))
        #expect(driver.lastRecord(of: 1)?.change.reason == "daemon stopped")
        #expect(driver.startedIDs() == [1], "job 2 does not start")
        driver.recordAll()
        #expect(driver.shutdownComplete)
    }

    @Test func recordsCarryTheCoresClock() {
        var driver = CoreDriver()
        driver.advance(milliseconds: 12_345)
        driver.send(.adopted([makeJob(1)]))
        driver.command(.pause, 1)
        driver.send(.stopped(JobID(rawValue: 1), nil))
        #expect(driver.records.allSatisfy { $0.at == driver.now })
        #expect(driver.job(1)?.updatedAt == driver.now)
    }
}

/// `modify` of a queued job: it waits under its new priority and host; the old place is dropped.
@Suite struct ModifyCoreTests {
    @Test func aQueuedJobMovesToItsNewPriorityAndHost() {
        var driver = CoreDriver(maxActive: 1, maxPerHost: 1)
        driver.send(.adopted([makeJob(1)]))  // running: holds the one slot
        driver.send(.adopted([makeJob(2)]))
        driver.send(.adopted([makeJob(3)]))
        var moved = makeJob(3, host: "h2", priority: .high)
        moved.maxRetries = 9
        driver.send(.modified(moved))
        #expect(driver.core.jobs[JobID(rawValue: 3)]?.host == HostKey.parse("http://h2:8080/f3")?.key)
        #expect(driver.core.jobs[JobID(rawValue: 3)]?.job.priority == .high)
        driver.send(.attemptEnded(JobID(rawValue: 1), makeReport(1, .failed(.httpStatus(404)), kept: 0)))
        driver.recordAll()
        #expect(driver.started.map(\.id.rawValue).suffix(1) == [3], "the high-priority job goes first: \(driver.started)")
    }

    @Test func changesAreCheckedAsANewJobsValues() throws {
        var job = makeJob(1)
        job.headers = ["X-A: 1", "Authorization: old", "x-b: 2"]
        let changed = try JobChanges(headers: ["authorization: new"], removeHeaders: ["X-B"], limit: 0).applied(to: job)
        #expect(changed.headers == ["X-A: 1", "authorization: new"])
        #expect(changed.limit == nil)
        #expect(throws: JobRefusal.self) { try JobChanges(url: "ftp://h/x").applied(to: job) }
        #expect(throws: JobRefusal.self) { try JobChanges(headers: ["bad\r\nX: y"]).applied(to: job) }
        #expect(throws: JobRefusal.self) { try JobChanges(retries: -1).applied(to: job) }
        #expect(JobChanges.allows(.failed) && !JobChanges.allows(.running) && !JobChanges.allows(.completed))
    }
}

/// A driver whose job 1 received all of its 1,000 bytes: its file is being finished.
private func finishingJob() -> (driver: CoreDriver, id: JobID, report: AttemptReport) {
    var driver = CoreDriver()
    driver.send(.adopted([makeJob(1)]))
    let id = JobID(rawValue: 1)
    let report = makeReport(1, .completed, kept: 1000)
    driver.send(.attemptEnded(id, report))
    return (driver, id, report)
}
