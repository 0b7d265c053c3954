/// A download's start, held on the loop instead of recorded at once: written in one transaction
/// with the job's next record — its end, which for a small file comes a few milliseconds later,
/// a stop, a checkpoint — or, for a download still running `startHoldMilliseconds` later, with
/// the other starts held then. A small file's row then changes once instead of twice (queued to
/// completed, not through running), and the store's queue takes one piece of work less per file.
/// The store lags by as much: answers read from it count such a job as running
/// (`countingHeldStarts`, `listingHeldStarts`), and its `running` event, which follows the
/// record, comes with it. A daemon killed meanwhile leaves the job queued, as if the attempt had
/// not begun (its file had no name yet, and is gone).
extension Scheduler {
    /// How long a start is held at most.
    static let startHoldMilliseconds: UInt64 = 250

    func hold(_ start: HeldStart) {
        if heldStarts.isEmpty { heldStartTimer.start(after: Self.startHoldMilliseconds) }
        heldStarts[start.id] = start
    }

    /// The job's held start, no longer held (to be written with a record of the job).
    func takeHeldStart(of id: JobID) -> HeldStart? {
        heldStarts.removeValue(forKey: id)
    }

    /// Records the job's held start now, before what the caller records next for it (a
    /// checkpoint's row of the attempt's bytes needs the attempt's row).
    func recordHeldStart(of id: JobID) {
        guard let start = takeHeldStart(of: id) else { return }
        record([start])
    }

    /// Records every start still held (the timer's, `startHoldMilliseconds` after the first).
    func recordHeldStarts() {
        let starts = Array(heldStarts.values)
        heldStarts.removeAll()
        record(starts)
    }

    private func record(_ starts: [HeldStart]) {
        guard !starts.isEmpty else { return }
        stored({ store in
            for start in starts { try start.write(to: store) }
        }, deferrable: true) { scheduler, result in
            for start in starts { scheduler.feed(.recorded(token: start.token, error: result.failureDescription)) }
        }
    }

    // MARK: Answers read from the store

    /// `counts` (by state, of the whole store or of `batch`) as they are: a job whose start is
    /// held is recorded `queued`, and is running.
    func countingHeldStarts(_ counts: [JobState: Int], batch: Int64? = nil) -> [JobState: Int] {
        let held = heldStarts.keys.count { id in batch == nil || core.jobs[id]?.job.batch == batch }
        guard held > 0 else { return counts }
        var counts = counts
        counts[.queued] = max(0, counts[.queued, default: 0] - held)
        counts[.running, default: 0] += held
        return counts
    }

    /// A page of `list --state running` (newest first, at most `limit`, older than `before`, of
    /// `batch`) with the running jobs whose start is held, which the store's page had as queued.
    func listingHeldStarts(_ page: [Job], batch: Int64?, before: JobID?, limit: Int) -> [Job] {
        let held = heldStarts.keys.compactMap { id -> Job? in
            guard let job = core.jobs[id]?.job, batch == nil || job.batch == batch,
                  before.map({ id < $0 }) ?? true else { return nil }
            return current(job)
        }
        guard !held.isEmpty else { return page }
        let merged = (page + held).sorted { $0.id > $1.id }
        // A full page stops at its oldest job: one held past it belongs to the next page.
        let oldest = page.count >= limit ? page.last?.id : nil
        return Array(merged.filter { job in oldest.map { job.id >= $0 } ?? true }.prefix(limit))
    }
}
