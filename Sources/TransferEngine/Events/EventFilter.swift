/// Which events one `events --follow` subscriber gets: those of some jobs, of one batch, of
/// some types — each nil for any. Pure; unit-tested.
public struct EventFilter: Equatable, Sendable {
    public var jobs: Set<JobID>?
    public var batch: Int64?
    public var types: Set<TransferEvent.Kind>?

    public init(jobs: Set<JobID>? = nil, batch: Int64? = nil, types: Set<TransferEvent.Kind>? = nil) {
        self.jobs = jobs
        self.batch = batch
        self.types = types
    }

    /// Every event (what a client that names no filter gets).
    public static let all = EventFilter()

    func matches(_ event: TransferEvent) -> Bool {
        if let types, !types.contains(event.type) { return false }
        if let jobs, !(event.job.map(jobs.contains) ?? false) { return false }
        if let batch, event.batch != batch { return false }
        return true
    }
}
