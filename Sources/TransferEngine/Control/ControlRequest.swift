/// One request on the control socket: a JSON object on one line (docs/control-protocol.md).
/// Flat on purpose: each command reads the fields it needs and ignores the rest.
public struct ControlRequest: Codable, Equatable, Sendable {
    public static let protocolVersion = 1
    /// Larger request lines are refused and the connection is closed.
    public static let maxLineBytes = 1 << 20
    /// More job ids in one request are refused (`too_large`).
    public static let maxIDs = 100_000

    public var version: Int
    /// Any number the client chooses; the response carries it back (answers to a connection's
    /// requests may come out of order, e.g. after a pending `wait`).
    public var id: Int?
    public var command: ControlCommand
    /// Jobs the command acts on.
    public var ids: [JobID]?
    /// `pause --all`, `resume --all`, `wait --all`.
    public var all: Bool?
    /// `add`: the job to queue.
    public var job: NewJob?
    /// `list`: only jobs in this state.
    public var state: JobState?
    /// `list`, `pause`, ...: only jobs of this batch.
    public var batch: Int64?
    /// `list`: at most this many jobs, and (paging on) only ids below `before`.
    public var limit: Int?
    public var before: JobID?
    /// `submit`: a chunk of a manifest; `backup-plan`: a backup's entries.
    public var submission: BatchSubmission?
    /// `limit` with one id: the job's new limit in bytes/s (0: unlimited).
    public var rate: Int64?
    /// `limit`: new global limits in bytes/s (0: unlimited); absent: unchanged.
    public var down: Int64?
    public var up: Int64?
    /// `limit`: a new timetable (see LimitSchedule); "" removes it.
    public var schedule: String?
    /// `prune`: only jobs in these (ended) states; absent: completed, failed and cancelled.
    public var states: [JobState]?
    /// `prune`: only jobs that ended more than this many seconds ago; absent: any age.
    public var olderThan: Int64?
    /// `events`: keep the connection open and send each new event as a line.
    public var follow: Bool?
    /// `modify` (with one id): what to change.
    public var changes: JobChanges?
    /// `events`: only events of these types (with `ids`: of these jobs; with `batch`: of that
    /// batch and its jobs). Absent: every type.
    public var types: [TransferEvent.Kind]?
    /// `wait`: answer with `outcomes` (id, state, error) instead of whole `jobs`.
    public var brief: Bool?
    /// `wait` with `brief`: the jobs that completed as id ranges (`completed`), `outcomes` only
    /// for the others.
    public var ranges: Bool?

    /// Refuses more than `maxIDs` ids and keeps the first of each repeated id, in order: the
    /// size of the work a request asks for is the number of distinct jobs it names.
    public mutating func normalizeIDs() throws(ControlError) {
        guard let ids else { return }
        guard ids.count <= Self.maxIDs else {
            throw ControlError(.tooLarge, "a request may name at most \(Self.maxIDs) job ids, got \(ids.count)")
        }
        var seen = Set<JobID>(minimumCapacity: ids.count)
        self.ids = ids.filter { seen.insert($0).inserted }
    }

    public init(_ command: ControlCommand, ids: [JobID]? = nil, all: Bool? = nil, job: NewJob? = nil,
                state: JobState? = nil, batch: Int64? = nil, limit: Int? = nil, rate: Int64? = nil,
                down: Int64? = nil, up: Int64? = nil, schedule: String? = nil, follow: Bool? = nil,
                before: JobID? = nil, submission: BatchSubmission? = nil) {
        version = Self.protocolVersion
        self.command = command
        self.ids = ids
        self.all = all
        self.job = job
        self.state = state
        self.batch = batch
        self.limit = limit
        self.rate = rate
        self.down = down
        self.up = up
        self.schedule = schedule
        self.follow = follow
        self.before = before
        self.submission = submission
    }
}

extension ControlRequest {
    /// Every number of the request within `NumericLimits` (a job's own are checked with the job):
    /// the daemon answers `invalid_argument` otherwise. Rates of 0 mean unlimited.
    public func checkNumbers() throws(OutOfRange) {
        for id in ids ?? [] { _ = try NumericLimits.id.check(id.rawValue, "ids") }
        if let before { _ = try NumericLimits.id.check(before.rawValue, "before") }
        if let batch { _ = try NumericLimits.id.check(batch, "batch") }
        if let batch = submission?.batch { _ = try NumericLimits.id.check(batch, "submission.batch") }
        if let umask = submission?.umask { _ = try NumericLimits.umask.check(umask, "submission.umask") }
        if let limit { _ = try NumericLimits.pageSize.check(limit, "limit") }
        if let olderThan { _ = try NumericLimits.ageSeconds.check(olderThan, "olderThan") }
        for (rate, field) in [(rate, "rate"), (down, "down"), (up, "up")] {
            if let rate, rate != 0 { _ = try NumericLimits.rate.check(rate, field) }
        }
    }
}

/// The commands of protocol version 1. Raw values are the wire words.
public enum ControlCommand: String, Codable, Sendable, CaseIterable {
    case add, list, show, pause, resume, cancel, retry, wait, stats, limit, events, modify
    case resumeData = "resume-data"
    /// Queue a manifest (in chunks) as a batch; `batch create` is an empty one.
    case submit
    case batchList = "batch-list"
    case batchShow = "batch-show"
    /// What `submit` would do with a backup's files (a chunk of its entries), doing nothing.
    case backupPlan = "backup-plan"
    /// Delete ended jobs (history) with everything that belongs to them.
    case prune
}
