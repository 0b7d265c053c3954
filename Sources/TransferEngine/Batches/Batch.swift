/// A named, persisted group of jobs, with the totals of its jobs as clients see them.
/// Its state is derived from its jobs' states (`BatchState.derive`). Thread: a value; any.
public struct Batch: Codable, Equatable, Sendable {
    public var id: Int64
    public var name: String
    public var state: BatchState
    public var createdAt: Timestamp
    /// Jobs by state (every state present, 0 when none).
    public var jobs: [String: Int]
    public var jobCount: Int
    public var bytesDone: Int64
    /// Null while any unfinished job's size is unknown.
    public var bytesTotal: Int64?
    /// Bytes per second over the last second, all its running jobs together.
    public var rate: Int64
    /// Seconds left at the current rate, when the total is known and bytes are moving.
    public var etaSeconds: Int64?
    public var onComplete: String?
    public var onFail: String?
    /// `backup DIR --to PREFIX`: the directory and the URL prefix.
    public var backup: BackupTarget?

    private enum CodingKeys: String, CodingKey {
        case id, name, state, createdAt, jobs, jobCount, bytesDone, bytesTotal, rate, etaSeconds, onComplete, onFail, backup
    }

    /// Every key present, null when unknown (as the job JSON).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(state, forKey: .state)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(jobs, forKey: .jobs)
        try container.encode(jobCount, forKey: .jobCount)
        try container.encode(bytesDone, forKey: .bytesDone)
        try container.encode(bytesTotal, forKey: .bytesTotal)
        try container.encode(rate, forKey: .rate)
        try container.encode(etaSeconds, forKey: .etaSeconds)
        try container.encode(onComplete, forKey: .onComplete)
        try container.encode(onFail, forKey: .onFail)
        try container.encode(backup.map { BackupTarget(directory: $0.directory, prefix: Redaction.url($0.prefix)) },
                             forKey: .backup)
    }

    public init(record: BatchRecord, counts: [JobState: Int], bytesDone: Int64, bytesTotal: Int64?, rate: Int64) {
        id = record.id
        name = record.name
        createdAt = record.createdAt
        onComplete = record.onComplete
        onFail = record.onFail
        backup = record.backup
        var byName: [String: Int] = [:]
        for state in JobState.allCases { byName[state.rawValue] = counts[state] ?? 0 }
        jobs = byName
        jobCount = counts.values.reduce(0, +)
        state = BatchState.derive(counts)
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.rate = rate
        if let bytesTotal, rate > 0, !state.hasEnded {
            etaSeconds = max(0, bytesTotal.saturatingSubtract(bytesDone)) / rate
        }
    }
}

/// What the store keeps of a batch itself.
public struct BatchRecord: Codable, Equatable, Sendable {
    public var id: Int64
    public var name: String
    public var createdAt: Timestamp
    public var onComplete: String?
    public var onFail: String?
    public var backup: BackupTarget?
}

/// A batch's state, from its jobs': anything running makes it running, then queued, waiting,
/// paused; once every job has ended it is failed if any failed, cancelled if all were,
/// completed otherwise. A batch without jobs is `empty`.
public enum BatchState: String, Codable, Sendable {
    case empty, running, queued, waiting, paused, completed, failed, cancelled

    public static func derive(_ counts: [JobState: Int]) -> BatchState {
        func has(_ state: JobState) -> Bool { (counts[state] ?? 0) > 0 }
        if counts.values.allSatisfy({ $0 == 0 }) { return .empty }
        if has(.running) { return .running }
        if has(.queued) { return .queued }
        if has(.waiting) { return .waiting }
        if has(.paused) { return .paused }
        if has(.failed) { return .failed }
        if !has(.completed) { return .cancelled }
        return .completed
    }

    public var hasEnded: Bool { self == .completed || self == .failed || self == .cancelled || self == .empty }
}

/// Where a directory backup goes.
public struct BackupTarget: Codable, Equatable, Sendable {
    public var directory: String
    public var prefix: String

    public init(directory: String, prefix: String) {
        self.directory = directory
        self.prefix = prefix
    }
}
