/// One recorded run of a completion hook, for a job or for a batch.
public struct HookRun: Codable, Equatable, Sendable {
    public var job: JobID?
    public var batch: Int64?
    /// `complete` or `fail`.
    public var event: String
    public var command: String
    public var startedAt: Timestamp
    public var result: HookResult

    private enum CodingKeys: String, CodingKey { case job, batch, event, command, startedAt, result }

    /// Every key present: `job` is null for a batch's own hook.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(job, forKey: .job)
        try container.encode(batch, forKey: .batch)
        try container.encode(event, forKey: .event)
        try container.encode(command, forKey: .command)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(result, forKey: .result)
    }

    public init(job: JobID?, batch: Int64?, event: String, command: String, startedAt: Timestamp, result: HookResult) {
        self.job = job
        self.batch = batch
        self.event = event
        self.command = command
        self.startedAt = startedAt
        self.result = result
    }
}
