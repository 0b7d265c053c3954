/// When a batch ends: the decision kept apart from the store and the hooks. A batch ends when
/// its last unfinished job has ended in memory *and* every end of its jobs is recorded — ends
/// reach the store out of order (a failed download's partial file is synced first), and a
/// batch judged by a store that still has some of them running would decide nothing. Each end
/// is reported once; a job queued again (retry) makes the batch unfinished again. A value,
/// unit-tested. Thread: the loop thread.
struct BatchLedger {
    /// Unfinished jobs in memory, per batch.
    private var unfinished: [Int64: Int] = [:]
    /// Batches whose last unfinished job has ended in memory.
    private var ending: Set<Int64> = []
    /// Ends of a batch's jobs on their way to the store.
    private var unrecorded: [Int64: Int] = [:]

    /// A job of `batch` went from `old` (nil: just loaded) to `new` in memory.
    mutating func track(batch: Int64, from old: JobState?, to new: JobState) {
        let wasUnfinished = old.map { !$0.hasEnded } ?? false
        if wasUnfinished, new.hasEnded {
            let count = unfinished[batch, default: 1] - 1
            unfinished[batch] = count > 0 ? count : nil
            if count <= 0 { ending.insert(batch) }
        } else if !wasUnfinished, !new.hasEnded {
            unfinished[batch, default: 0] += 1
            ending.remove(batch)
        }
    }

    /// A job of `batch` ended in memory; its end is on its way to the store.
    mutating func endSent(batch: Int64) {
        unrecorded[batch, default: 0] += 1
    }

    /// The batch has jobs in memory, or ends of them on their way to the store, or its end is
    /// not judged yet: it is not history (its jobs are not pruned).
    func holds(batch: Int64) -> Bool {
        unfinished[batch] != nil || ending.contains(batch) || unrecorded[batch] != nil
    }

    /// That end is recorded. True exactly when the batch has now ended: the caller judges it
    /// from the store (which has every end) and runs its hooks.
    mutating func endRecorded(batch: Int64) -> Bool {
        let count = unrecorded[batch, default: 1] - 1
        unrecorded[batch] = count > 0 ? count : nil
        return count <= 0 && ending.remove(batch) != nil
    }
}
