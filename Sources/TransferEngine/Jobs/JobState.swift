/// A job's lifecycle state. The raw values are stored and printed: never rename them.
public enum JobState: String, Codable, Sendable, CaseIterable {
    case queued, running, paused, waiting, completed, failed, cancelled

    /// Completed and cancelled jobs never change again; failed ones only by `retry` or `cancel`.
    public var isFinal: Bool { self == .completed || self == .cancelled }

    /// Whether `wait` is over for a job in this state.
    public var hasEnded: Bool { self == .completed || self == .cancelled || self == .failed }

    /// `1990 completed, 10 failed`: jobs counted by state, in the order of `allCases`, the states
    /// none of them is in left out (empty when there are none).
    public static func describe(_ counts: [JobState: Int]) -> String {
        allCases.compactMap { state in counts[state].map { "\($0) \(state.rawValue)" } }.joined(separator: ", ")
    }

    /// The one transition table (SPEC.md "Job states"). Every change of state goes through it.
    public func canTransition(to next: JobState) -> Bool {
        switch (self, next) {
        case (.queued, .running), (.queued, .paused), (.queued, .cancelled):
            true
        case (.running, .completed), (.running, .failed), (.running, .waiting),
             (.running, .paused), (.running, .cancelled), (.running, .queued):
            true
        case (.waiting, .queued), (.waiting, .running), (.waiting, .paused), (.waiting, .cancelled):
            true
        case (.paused, .queued), (.paused, .cancelled):
            true
        case (.failed, .queued), (.failed, .cancelled):
            true
        case (.queued, _), (.running, _), (.waiting, _), (.paused, _), (.failed, _),
             (.completed, _), (.cancelled, _):
            false
        }
    }
}

/// Which way the bytes go.
public enum JobKind: String, Codable, Sendable {
    case download, upload
}

/// Scheduling priority: a queued `high` job starts before any `normal` or `low` one.
public enum Priority: String, Codable, Sendable, CaseIterable {
    case high, normal, low

    /// Sort key: smaller starts first.
    public var rank: Int {
        switch self {
        case .high: 0
        case .normal: 1
        case .low: 2
        }
    }
}
