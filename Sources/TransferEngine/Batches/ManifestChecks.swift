/// What was checked of a manifest's lines while its later chunks were still coming: each line's
/// job through `JobValidation` (its URL parsed, its destination looked at), off the loop, so
/// that the queueing transaction at the last chunk checks only the lines not checked yet (the
/// validation of 2,000 lines was 4.3–4.6 ms of that transaction, one core idle meanwhile;
/// BENCHMARKS.md). A value kept with the manifest's chunks (`ManifestStaging`). Pure;
/// unit-tested.
struct ManifestChecks: Equatable, Sendable {
    /// The entries checked, by index in the manifest (from 0 once a manifest's chunks' checks
    /// are put together).
    private(set) var checked = 0..<0
    /// The client's umask they were checked with.
    private(set) var umask: Int?
    /// The checked entries `JobValidation` refused, by index in the manifest.
    private var refusals: [Int: JobRefusal] = [:]

    /// How many of the manifest's first entries were checked.
    var count: Int { checked.lowerBound == 0 ? checked.upperBound : 0 }

    /// Checks `entries`, the manifest's entries from index `offset` on, as the queueing would
    /// with `umask` as the client's. Thread: any (it may stat files: not the loop's).
    static func check(_ entries: some Collection<ManifestEntry>, from offset: Int, umask: Int?) -> ManifestChecks {
        var checks = ManifestChecks(checked: offset..<(offset + entries.count), umask: umask)
        for (index, entry) in zip(offset..., entries) {
            do throws(JobRefusal) {
                try JobValidation.validate(entry.job(umask: umask))
            } catch {
                checks.refusals[index] = error
            }
        }
        return checks
    }

    /// Adds the checks of the entries that follow these; checks of other entries, or made with
    /// another umask, are left out.
    mutating func append(_ later: ManifestChecks) {
        guard checked.lowerBound == 0, later.checked.lowerBound == checked.upperBound, !later.checked.isEmpty,
              later.umask == umask || checked.isEmpty else { return }
        refusals.merge(later.refusals) { first, _ in first }
        checked = 0..<later.checked.upperBound
        umask = later.umask
    }

    /// `JobValidation` of entry `index`'s job `new` (as `ManifestEntry.job(umask:)` makes it):
    /// what its check found when it was checked with `umask`, else checked now.
    func validate(_ new: NewJob, at index: Int, umask: Int?) throws(JobRefusal) {
        guard checked.contains(index), umask == self.umask else { return try JobValidation.validate(new) }
        if let refusal = refusals[index] { throw refusal }
    }
}
