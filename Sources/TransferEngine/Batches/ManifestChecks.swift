/// What was checked of a manifest's lines while its later chunks were still coming: each line's
/// job through `JobValidation` (its URL parsed, its destination looked at), off the loop, so
/// that the queueing transaction at the last chunk checks only the lines not checked yet (the
/// validation of 2,000 lines was 4.3–4.6 ms of that transaction, one core idle meanwhile;
/// BENCHMARKS.md), and a valid download's row made ready (`PreparedJob`), so that the
/// transaction only writes it. A value kept with the manifest's chunks (`ManifestStaging`).
/// Pure; unit-tested.
struct ManifestChecks: Equatable, Sendable {
    /// The entries checked, by index in the manifest (from 0 once a manifest's chunks' checks
    /// are put together).
    private(set) var checked = 0..<0
    /// The client's umask they were checked with.
    private(set) var umask: Int?
    /// The `defaultRetries` the rows were prepared with (nil: none was).
    private(set) var defaultRetries: Int?
    /// The checked entries `JobValidation` refused, by index in the manifest.
    private var refusals: [Int: JobRefusal] = [:]
    /// The rows of the checked entries that were prepared, by index in the manifest.
    private var rows: [Int: PreparedJob] = [:]

    /// How many of the manifest's first entries were checked.
    var count: Int { checked.lowerBound == 0 ? checked.upperBound : 0 }

    /// Checks `entries`, the manifest's entries from index `offset` on, as the queueing would
    /// with `umask` as the client's; with `defaultRetries`, prepares the rows of the valid
    /// downloads a new batch's queueing would insert (`PreparedJob.download`). Thread: any (it
    /// may stat files: not the loop's).
    static func check(_ entries: some Collection<ManifestEntry>, from offset: Int, umask: Int?,
                      defaultRetries: Int? = nil) -> ManifestChecks {
        var checks = ManifestChecks(checked: offset..<(offset + entries.count), umask: umask, defaultRetries: defaultRetries)
        if defaultRetries != nil { checks.rows.reserveCapacity(entries.count) }
        // Each directory's spelling is resolved once for the chunk.
        var directories: [String: String]? = [:]
        for (index, entry) in zip(offset..., entries) {
            let job = entry.job(umask: umask)
            do throws(JobRefusal) {
                try JobValidation.validate(job)
            } catch {
                checks.refusals[index] = error
                continue
            }
            if let defaultRetries,
               let row = PreparedJob.download(job, defaultRetries: defaultRetries, key: entry.key, directories: &directories) {
                checks.rows[index] = row
            }
        }
        return checks
    }

    /// Adds the checks of the entries that follow these; checks of other entries, or made with
    /// another umask, are left out (and rows made with other retries).
    mutating func append(_ later: ManifestChecks) {
        guard checked.lowerBound == 0, later.checked.lowerBound == checked.upperBound, !later.checked.isEmpty,
              later.umask == umask || checked.isEmpty else { return }
        refusals.merge(later.refusals) { first, _ in first }
        // Rows made with other retries than the first ones are left to the queueing.
        defaultRetries = defaultRetries ?? later.defaultRetries
        if later.defaultRetries == defaultRetries { rows.merge(later.rows) { first, _ in first } }
        checked = 0..<later.checked.upperBound
        umask = later.umask
    }

    /// `JobValidation` of entry `index`'s job `new` (as `ManifestEntry.job(umask:)` makes it):
    /// what its check found when it was checked with `umask`, else checked now.
    func validate(_ new: NewJob, at index: Int, umask: Int?) throws(JobRefusal) {
        guard checked.contains(index), umask == self.umask else { return try JobValidation.validate(new) }
        if let refusal = refusals[index] { throw refusal }
    }

    /// Entry `index`'s row, valid and prepared as queueing it with `umask` as the client's and
    /// `defaultRetries` would make it; nil when it was not (queueing makes it then).
    func row(at index: Int, umask: Int?, defaultRetries: Int) -> PreparedJob? {
        guard checked.contains(index), umask == self.umask, defaultRetries == self.defaultRetries else { return nil }
        return rows[index]
    }
}
