/// One recorded run of a completion hook, for a job or for a batch.
public struct HookRun: Codable, Equatable, Sendable {
    public var job: JobID?
    public var batch: Int64?
    /// `complete` or `fail`.
    public var event: String
    public var command: String
    public var startedAt: Timestamp
    public var result: HookResult

    public init(job: JobID?, batch: Int64?, event: String, command: String, startedAt: Timestamp, result: HookResult) {
        self.job = job
        self.batch = batch
        self.event = event
        self.command = command
        self.startedAt = startedAt
        self.result = result
    }
}
