/// How a job ended, as `wait` with `brief` answers it: what `transferctl wait` prints of each
/// job (id, state, and the error of one that did not complete), without the rest of the job —
/// for a batch of thousands, the whole jobs were most of the answer's time on both sides.
public struct JobOutcome: Codable, Equatable, Sendable {
    public var id: JobID
    public var state: JobState
    /// Left out for a completed job.
    public var error: JobError?

    public init(_ job: Job) {
        id = job.id
        state = job.state
        error = job.state == .completed ? nil : job.error
    }

    /// Each job of `response`: its `outcomes`, and its `completed` ranges (`ranges`) one by one.
    public static func all(in response: ControlResponse) -> [JobOutcome]? {
        guard response.outcomes != nil || response.completed != nil else { return nil }
        let completed = (response.completed ?? []).lazy.flatMap(\.ids).map { JobOutcome(id: $0, state: .completed) }
        return (response.outcomes ?? []) + completed
    }

    private init(id: JobID, state: JobState) {
        self.id = id
        self.state = state
    }
}
