import Testing
@testable import TransferEngine

/// A batch ends once its last job has ended and every end of its jobs is recorded, whatever
/// order the records come back in; exactly once; and again only after a job was queued anew.
@Suite struct BatchLedgerTests {
    /// Three jobs of batch 7 loaded queued.
    func ledger() -> BatchLedger {
        var ledger = BatchLedger()
        for _ in 0..<3 { ledger.track(batch: 7, from: nil, to: .queued) }
        return ledger
    }

    /// A job ends in memory: tracked, and its end sent to the store.
    func end(_ ledger: inout BatchLedger, from old: JobState = .running, to new: JobState = .completed) {
        ledger.track(batch: 7, from: old, to: new)
        ledger.endSent(batch: 7)
    }

    @Test func endsWhenTheLastEndIsRecordedNotWhenTheLastJobEnds() {
        var ledger = ledger()
        end(&ledger); end(&ledger); end(&ledger)
        let ended1 = ledger.endRecorded(batch: 7)
        #expect(!ended1)
        let ended2 = ledger.endRecorded(batch: 7)
        #expect(!ended2)
        let ended3 = ledger.endRecorded(batch: 7)
        #expect(ended3, "the third record ends it")
    }

    @Test func endsRecordedBeforeTheLastJobEndsDoNotEndIt() {
        var ledger = ledger()
        end(&ledger)
        let ended4 = ledger.endRecorded(batch: 7)
        #expect(!ended4, "two jobs still run")
        end(&ledger)
        let ended5 = ledger.endRecorded(batch: 7)
        #expect(!ended5)
        end(&ledger, to: .failed)
        let ended6 = ledger.endRecorded(batch: 7)
        #expect(ended6)
    }

    @Test func aBatchEndsExactlyOnce() {
        var ledger = ledger()
        end(&ledger); end(&ledger); end(&ledger)
        let ends = (0..<3).map { _ in ledger.endRecorded(batch: 7) }.filter { $0 }.count
        #expect(ends == 1)
        let ended7 = ledger.endRecorded(batch: 7)
        #expect(!ended7, "a stray record ends nothing again")
    }

    @Test func aJobQueuedAgainMakesItUnfinishedUntilThatJobEnds() {
        var ledger = ledger()
        end(&ledger); end(&ledger); end(&ledger, to: .failed)
        ledger.track(batch: 7, from: .failed, to: .queued)  // retry before the last record is back
        let ended8 = ledger.endRecorded(batch: 7)
        #expect(!ended8)
        let ended9 = ledger.endRecorded(batch: 7)
        #expect(!ended9)
        let ended10 = ledger.endRecorded(batch: 7)
        #expect(!ended10, "the retried job runs: the batch has not ended")
        ledger.track(batch: 7, from: .queued, to: .running)
        end(&ledger)
        let ended11 = ledger.endRecorded(batch: 7)
        #expect(ended11, "it ends again with the retried job")
    }

    @Test func stateChangesThatStayUnfinishedChangeNothing() {
        var ledger = BatchLedger()
        ledger.track(batch: 1, from: nil, to: .paused)
        ledger.track(batch: 1, from: .paused, to: .queued)
        ledger.track(batch: 1, from: .queued, to: .running)
        ledger.track(batch: 1, from: .running, to: .waiting)
        ledger.track(batch: 1, from: .waiting, to: .cancelled)
        ledger.endSent(batch: 1)
        let ended12 = ledger.endRecorded(batch: 1)
        #expect(ended12, "one job, counted once however often it moved")
    }

    @Test func batchesAreCountedApart() {
        var ledger = BatchLedger()
        ledger.track(batch: 1, from: nil, to: .queued)
        ledger.track(batch: 2, from: nil, to: .queued)
        ledger.track(batch: 1, from: .queued, to: .cancelled)
        ledger.endSent(batch: 1)
        let ended13 = ledger.endRecorded(batch: 1)
        #expect(ended13)
        let ended14 = ledger.endRecorded(batch: 2)
        #expect(!ended14, "batch 2's job has not ended")
    }
}
