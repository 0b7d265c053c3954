/// What was checked of a manifest's lines while its later chunks were still coming: each line's
/// job through `JobValidation` (its URL parsed, its destination looked at), off the loop, so
/// that the queueing transaction at the last chunk checks only the lines not checked yet (the
/// validation of 2,000 lines was 4.3–4.6 ms of that transaction, one core idle meanwhile;
/// BENCHMARKS.md). Entries `start..<count` were checked, with the client's `umask`; the
/// checks of a manifest's chunks put together start at 0. A value kept with the manifest's
/// chunks (`ManifestStaging`). Pure; unit-tested.
struct ManifestChecks: Equatable, Sendable {
    /// The entries checked: `start..<count` (`start` is 0 once checks are put together).
    private(set) var start = 0
    private(set) var count = 0
    private(set) var umask: Int?
    /// The checked entries `JobValidation` refused, by index in the manifest.
    private var refusals: [Int: JobRefusal] = [:]

    /// Checks `entries`, the manifest's entries from index `offset` on, as the queueing would
    /// with `umask` as the client's. Thread: any (it may stat files: not the loop's).
    static func check(_ entries: some Collection<ManifestEntry>, from offset: Int, umask: Int?) -> ManifestChecks {
        var checks = ManifestChecks(start: offset, count: offset + entries.count, umask: umask)
        for (index, entry) in zip(offset..., entries) {
            do throws(JobRefusal) {
                try JobValidation.validate(Self.job(entry, umask: umask))
            } catch {
                checks.refusals[index] = error
            }
        }
        return checks
    }

    /// Adds the checks of the entries that follow these; checks of other entries, or made with
    /// another umask, are left out.
    mutating func append(_ later: ManifestChecks) {
        guard start == 0, later.start == count, later.count > count, later.umask == umask || count == 0 else { return }
        refusals.merge(later.refusals) { first, _ in first }
        count = later.count
        umask = later.umask
    }

    /// `JobValidation` of entry `index`'s job `new` (its umask set as `job` sets it): what its
    /// check found when it was checked with `umask`, else checked now.
    func validate(_ new: NewJob, at index: Int, umask: Int?) throws(JobRefusal) {
        guard (start..<count).contains(index), umask == self.umask else { return try JobValidation.validate(new) }
        if let refusal = refusals[index] { throw refusal }
    }

    /// The job of `entry` as the queueing checks it: the client's umask unless it has its own.
    static func job(_ entry: ManifestEntry, umask: Int?) -> NewJob {
        var new = entry.job
        new.umask = new.umask ?? umask
        return new
    }
}
