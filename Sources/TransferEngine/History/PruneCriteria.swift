/// Which jobs a prune deletes: ended jobs (completed, failed, cancelled — never an unfinished
/// one) in `states`, that ended more than `olderThan` ago, of `batch` when given. A value;
/// building one refuses an unfinished state (`PruneRefusal`). Thread: any.
public struct PruneCriteria: Equatable, Sendable {
    /// The states pruned, in `JobState.allCases` order; all three ended ones by default.
    public let states: [JobState]
    /// nil: any age.
    public let olderThan: Age?
    public let batch: Int64?

    /// The states a prune may delete.
    public static let endedStates = JobState.allCases.filter(\.hasEnded)

    public init(states: [JobState]? = nil, olderThan: Age? = nil, batch: Int64? = nil) throws(PruneRefusal) {
        let asked = states ?? Self.endedStates
        if let unfinished = asked.first(where: { !$0.hasEnded }) { throw .unfinishedState(unfinished) }
        guard !asked.isEmpty else { throw .noState }
        self.states = Self.endedStates.filter(asked.contains)
        self.olderThan = olderThan
        self.batch = batch
    }

    /// Jobs that ended before this instant are old enough (nil: every ended job is), at `now`.
    public func cutoff(now: Timestamp) -> Timestamp? {
        olderThan.map { now.adding(milliseconds: -$0.milliseconds) }
    }
}

/// Why a prune was refused before it began. Its message is one line a user can act on.
public enum PruneRefusal: Error, Equatable, Sendable {
    /// Only ended jobs are ever pruned: a queued, running, paused or waiting job is not history.
    case unfinishedState(JobState)
    /// `states` was given and empty.
    case noState

    public var message: String {
        switch self {
        case .unfinishedState(let state):
            "prune deletes only ended jobs (completed, failed, cancelled); a \(state.rawValue) job has not ended"
        case .noState:
            "prune needs at least one state: completed, failed or cancelled"
        }
    }
}
