@testable import TransferEngine

/// Drives a `SchedulerCore` as the shell does, with no loop, curl, files or store: it feeds
/// events at a clock the test moves, keeps what the actions asked for, and plays the store
/// (`recordAll`, or one record at a time in any order).
struct CoreDriver {
    var core: SchedulerCore
    var now = Timestamp(milliseconds: 1_000_000_000)
    /// Records (and attempt starts) on their way to the store, in the order they were asked for.
    private(set) var unrecorded: [StateRecord] = []
    private(set) var records: [StateRecord] = []
    private(set) var started: [(id: JobID, attempt: Int)] = []
    private(set) var stops: [JobID] = []
    private(set) var finalizes: [(id: JobID, report: AttemptReport)] = []
    /// The completion records `finalize` actions carried (the finishing group writes them).
    private(set) var completions: [StateRecord?] = []
    private(set) var published: [TransferEvent] = []
    private(set) var probes: [String] = []
    private(set) var hooks: [PendingHook] = []
    private(set) var batchEnds: [Int64] = []
    private(set) var claims: [JobID] = []
    private(set) var retryTimer: Timestamp?
    private(set) var acks: [Int: Result<Job, CommandRefusal>] = [:]
    private(set) var answers: [Int: [Job]] = [:]
    private(set) var shutdownComplete = false
    /// Chunks the core let a prune delete, by token.
    private(set) var prunes: [(token: Int, ids: [JobID])] = []
    /// Every action, in order.
    private(set) var actions: [SchedulerAction] = []
    private var lastToken = 0

    init(maxActive: Int = 4, maxPerHost: Int = 4, maxHooks: Int = 4, seed: UInt64 = 1) {
        var settings = SchedulerCore.Settings()
        settings.maxActive = maxActive
        settings.maxPerHost = maxPerHost
        settings.maxHooks = maxHooks
        core = SchedulerCore(settings: settings, seed: seed)
    }

    @discardableResult
    mutating func send(_ event: SchedulerEvent) -> [SchedulerAction] {
        let actions = core.handle(event, now: now)
        for action in actions { absorb(action) }
        self.actions += actions
        return actions
    }

    private mutating func absorb(_ action: SchedulerAction) {
        switch action {
        case .record(let record):
            records.append(record)
            unrecorded.append(record)
        case .startAttempt(let record, let attempt):
            records.append(record)
            unrecorded.append(record)
            started.append((record.id, attempt))
        case .stop(let id): stops.append(id)
        case .finalize(let id, let report, let completion):
            finalizes.append((id, report))
            completions.append(completion)
        case .publish(let event): published.append(event)
        case .probe(let url, _): probes.append(url)
        case .armRetryTimer(let due): retryTimer = due
        case .claimDestination(let id, _): claims.append(id)
        case .runHook(let hook): hooks.append(hook)
        case .batchEnded(let batch, _): batchEnds.append(batch)
        case .endRecorded: break
        case .prune(let token, let candidates): prunes.append((token, candidates.map(\.id)))
        case .answer(let token, let jobs): answers[token] = jobs
        case .acknowledge(let token, let result): acks[token] = result
        case .log: break
        case .shutdownComplete: shutdownComplete = true
        }
    }

    /// The store records the oldest unrecorded change (`failing`: it cannot).
    mutating func recordNext(failing: Bool = false) {
        recordAt(0, failing: failing)
    }

    mutating func recordAt(_ index: Int, failing: Bool = false) {
        let record = unrecorded.remove(at: index)
        send(.recorded(token: record.token, error: failing ? "disk full" : nil))
    }

    /// The store records everything asked of it (and what that leads to).
    mutating func recordAll() {
        while !unrecorded.isEmpty { recordNext() }
    }

    mutating func token() -> Int {
        lastToken += 1
        return lastToken
    }

    /// Sends a command; returns its acknowledgement's token.
    @discardableResult
    mutating func command(_ command: JobCommand, _ id: Int64, loaded: Job? = nil) -> Int {
        let ack = token()
        send(.command(command, JobID(rawValue: id), loaded: loaded, ack: ack))
        return ack
    }

    mutating func advance(milliseconds: Int64) {
        now = now.adding(milliseconds: milliseconds)
    }

    func job(_ id: Int64) -> Job? { core.job(JobID(rawValue: id)) }
    func state(_ id: Int64) -> JobState? { job(id)?.state }
    func startedIDs() -> [Int64] { started.map(\.id.rawValue) }
    /// The completion the job's last `finalize` action carried.
    func completion(of id: JobID) -> StateRecord? {
        finalizes.indices.last { finalizes[$0].id == id }.flatMap { completions[$0] }
    }

    func lastRecord(of id: Int64) -> StateRecord? { records.last { $0.id.rawValue == id } }
}

/// A job as the store hands it over.
func makeJob(_ id: Int64, state: JobState = .queued, kind: JobKind = .download, host: String = "h1",
             priority: Priority = .normal, batch: Int64? = nil, maxRetries: Int = 3, attempts: Int = 0,
             bytesDone: Int64 = 0, onComplete: String? = nil, method: String? = nil) -> Job {
    let created = Timestamp(milliseconds: 999_000_000)
    var job = Job(Job.Fields(id: JobID(rawValue: id), kind: kind, state: state, stateReason: nil, url: "http://\(host):8080/f\(id)",
                  path: kind == .download ? "/d/f\(id)" : "/s/f\(id)", headers: [], sha256: nil, overwrite: false,
                  priority: priority, batch: batch, limit: nil, maxRetries: maxRetries, bytesDone: bytesDone,
                  bytesTotal: nil, attempts: attempts, httpStatus: nil, error: nil, nextAttemptAt: nil, createdAt: created,
                  updatedAt: created, finishedAt: nil, method: method ?? (kind == .upload ? "PUT" : nil), upload: nil))
    job.onComplete = onComplete
    return job
}

/// A report of attempt `attempt` that ended with `outcome`, keeping `kept` durable bytes (a
/// download's checkpoint), or none (`kept` nil: an upload, or no transfer).
func makeReport(_ attempt: Int, _ outcome: AttemptOutcome, kept: Int64? = nil, id: Int64 = 1,
                retryAfter: Int64? = nil) -> AttemptReport {
    var report = AttemptReport(attempt: attempt, outcome: outcome, status: outcome.failure?.status)
    if let kept {
        report.resume = ResumeState(partialPath: "/d/f\(id).part")
        report.resume?.bytesDurable = kept
        report.transferred = kept
    }
    report.retryAfter = retryAfter
    return report
}
