/// The scheduler's decisions as a value: events in, actions out. It holds every job that may
/// still move, the run queue and running slots (`Admission`), the retry heap, the batches'
/// ledger, the hooks' queue, the jobs waiting for a host, and the `wait` requests; `handle`
/// is its one entry point, and `transition` the one function that changes a job's state. Time
/// and randomness come in as values; it performs nothing (no curl, files, store or loop), so
/// every decision is unit-tested by feeding events. Thread: the loop thread (a value).
struct SchedulerCore {
    struct Settings {
        var maxActive = 4
        var maxPerHost = 4
        /// Downloads being made durable beside the transfers (nil: `Admission`'s default).
        var maxFinishing: Int?
        /// Hooks running at once; the rest wait in order.
        var maxHooks = 4
        /// A job that keeps no new byte for this long fails instead of retrying.
        var noProgressMilliseconds: Int64 = 30 * 60 * 1000
        var policy = RetryPolicy()
        /// Log lines below this level are not even built (the daemon's `--log-level`).
        var logLevel = Logger.Level.debug
    }

    let settings: Settings
    /// Every job that may still move.
    var jobs: [JobID: JobRecord] = [:]
    /// Jobs that ended in memory whose end the store has not recorded yet: a read queued before
    /// that write still finds them unfinished, and must be answered with this.
    var ending: [JobID: (token: Int, job: Job)] = [:]
    var admission: Admission
    /// Waiting jobs by due time (entries of jobs that left `waiting` are dropped as they come up).
    var retryQueue = Heap<RetryEntry>()
    var batches = BatchLedger()
    /// Records on their way to the store, by token: what their being recorded completes.
    var unrecorded: [Int: Unrecorded] = [:]
    var waiters: [Waiter] = []
    var hookQueue: [PendingHook] = []
    var hooksRunning = 0
    /// Offline jobs by the host they wait for.
    var hostWaits: [String: Set<JobID>] = [:]
    var stopping = false
    /// While stopping: the jobs that were running and are not recorded as stopped yet.
    var stillRunning: Set<JobID> = []
    /// Ended jobs a prune is deleting from the store, by chunk, and all of them together: a
    /// command that read one from the store finds it gone (`perform`).
    var pruning: [Int: [JobID]] = [:]
    var pruningIDs: Set<JobID> = []
    private var lastToken = 0
    private var random: SplitMix64
    /// Actions decided by the event being handled, in order.
    private var actions: [SchedulerAction] = []
    /// The buffer of an answer already performed, handed back empty (`recycle`): the next
    /// answer is made in it instead of in a new array.
    private var spareActions: [SchedulerAction] = []

    /// What a record's being recorded completes.
    struct Unrecorded {
        var id: JobID
        var event: TransferEvent
        var ended: Job?
        var hook: PendingHook?
        var acks: [CommandAck]
        /// Events of the job that happened meanwhile, published right after `event`.
        var then: [TransferEvent] = []
    }

    init(settings: Settings, seed: UInt64) {
        self.settings = settings
        admission = Admission(maxActive: settings.maxActive, maxPerHost: settings.maxPerHost, maxFinishing: settings.maxFinishing)
        random = SplitMix64(seed: seed)
    }

    /// Decides what `event` leads to, at `now`.
    mutating func handle(_ event: SchedulerEvent, now: Timestamp) -> [SchedulerAction] {
        swap(&actions, &spareActions)
        defer { actions = [] }  // the answer is the caller's alone: it may take its actions out
        switch event {
        case .restarted(let unfinished): restart(unfinished, now: now)
        case .hooksDue(let hooks, let batches):
            for hook in hooks {
                log(.info, "\(hook.owner): running --on-\(hook.event), due when transferd stopped")
                enqueue(hook)
            }
            for batch in batches { actions.append(.batchEnded(batch, announce: false)) }
        case .hookDue(let hook): enqueue(hook)
        case .limit(let id, let limit): jobs[id]?.job.limit = limit
        case .named(let id, let path): jobs[id]?.job.path = path
        case .modified(let job): modify(job, now: now)
        case .adopted(let jobs):
            // The table grows once for a whole manifest: growing at each doubling was a quarter
            // of adopting 2,000 jobs (BENCHMARKS.md).
            self.jobs.reserveCapacity(self.jobs.count + jobs.count)
            for job in jobs { adopt(job, now: now) }
        case .command(let command, let id, let loaded, let ack): perform(command, id, loaded: loaded, ack: ack, now: now)
        case .destinationClaimed(let id, let result): claimed(id, result, now: now)
        case .readyToFinalize(let id, let attempt):
            if isCurrentAttempt(id, attempt) { finalize(id, AttemptReport(attempt: attempt, outcome: .completed), now: now) }
        case .alreadyComplete(let id, let attempt, let bytes, let total):
            if isCurrentAttempt(id, attempt) {
                let change = StateChange(.completed, reason: "finished before the daemon stopped", bytesDone: bytes, bytesTotal: total)
                transition(id, change, now: now) {
                    $0.resume = .delete
                }
            }
        case .launched(let event): if let id = event.job { publish(event, of: id) }
        case .attemptEnded(let id, let report): attemptEnded(id, report, now: now)
        case .stopped(let id, let report): stopped(id, report, now: now)
        case .finalized(let id, let report, let result, let recorded): finalized(id, report, result, recorded: recorded, now: now)
        case .recorded(let token, let error): recorded(token, error: error)
        case .retryDue: retryDue(now: now)
        case .hostAnswered(let host): hostAnswered(host, now: now)
        case .tick(let activities): tick(activities)
        case .hookFinished:
            hooksRunning -= 1
            startHooks()
        case .wait(let token, let owner, let ids, let ended): wait(token, owner: owner, ids, ended: ended)
        case .waitsDropped(let owner): waiters.removeAll { $0.owner == owner }
        case .prunable(let token, let candidates): prunable(token, candidates)
        case .pruned(let token): pruned(token)
        case .shutdown: shutdown()
        }
        startNext(now: now)
        return actions
    }

    /// Takes back the buffer of an answer whose actions were all taken out of it.
    mutating func recycle(_ answer: consuming [SchedulerAction]) {
        answer.removeAll(keepingCapacity: true)
        spareActions = answer
    }

    /// The job in memory, or as it ended while its end is on its way to the store.
    func job(_ id: JobID) -> Job? { jobs[id]?.job ?? ending[id]?.job }

    /// The attempt is the job's current one and still preparing or transferring: a late result of
    /// an attempt that was paused, cancelled or stopped meanwhile is dropped.
    func isCurrentAttempt(_ id: JobID, _ attempt: Int) -> Bool {
        guard let record = jobs[id] else { return false }
        return record.job.state == .running && record.job.attempts == attempt && record.phase == .attempt
    }

    // MARK: The one transition

    /// Changes a job's state — in memory, in the queues and ledgers, and by a `record` action in
    /// the store — and returns that record for the caller to add what goes with it.
    /// Every state change of every job goes through here. `recorded`: a change the store already
    /// holds (its record made by `completionRecord`, at its time): no record action, and what
    /// its recording completes happens now.
    @discardableResult
    mutating func transition(_ id: JobID, _ change: StateChange, now: Timestamp, acks: [CommandAck] = [],
                             recorded: RecordedCompletion? = nil,
                             _ with: (inout StateRecord) -> Void = { _ in }) -> StateRecord? {
        guard let old = jobs[id]?.job.state else { return nil }
        precondition(old.canTransition(to: change.state), "illegal transition \(old) -> \(change.state)")
        // Changed where the dictionary holds it: a copy taken first would share the job's box,
        // and the change would copy the whole job.
        jobs[id]!.job.apply(change, now: now)
        jobs[id]!.phase = .idle
        let record = jobs[id]!
        track(record, from: old)
        var event = TransferEvent(.state, of: record.job)
        event.from = old
        event.state = change.state
        event.reason = change.reason
        event.error = change.error
        // A job that ends between two progress events still tells its bytes.
        if change.state.hasEnded {
            event.bytesDone = record.job.bytesDone
            event.bytesTotal = record.job.bytesTotal
        }
        var stateRecord = recorded?.record ?? StateRecord(token: nextToken(), id: id, change: change, at: now)
        if recorded == nil { with(&stateRecord) }
        stateRecord.awaited = !acks.isEmpty || change.state.hasEnded && waiters.contains { $0.isLast(id) }
        var ended: Job?
        if change.state.hasEnded {
            jobs[id] = nil
            ended = record.job
            ending[id] = (stateRecord.token, record.job)
            if recorded == nil { stateRecord.hook = PendingHook.forJob(record.job) }
            if let batch = record.job.batch { batches.endSent(batch: batch) }
            forgetHostWait(id, host: record.route)
        }
        unrecorded[stateRecord.token] = Unrecorded(id: id, event: event, ended: ended, hook: stateRecord.hook, acks: acks)
        if let recorded {
            self.recorded(stateRecord.token, error: recorded.error)
        } else {
            actions.append(.record(stateRecord))
        }
        return stateRecord
    }

    /// Keeps admission, the retry heap and the batches' counts in step with a job's state
    /// (`old` nil for a job just taken into memory).
    mutating func track(_ record: JobRecord, from old: JobState?) {
        let new = record.job.state
        guard old != new else { return }
        admission.track(record.id, host: record.host, priority: record.job.priority, from: old, to: new)
        if new == .waiting, let due = record.job.nextAttemptAt {
            retryQueue.push(RetryEntry(due: due, id: record.id))
        }
        if let batch = record.job.batch { batches.track(batch: batch, from: old, to: new) }
    }

    // MARK: Taking jobs in

    private mutating func restart(_ unfinished: [Job], now: Timestamp) {
        for job in unfinished {
            let record = JobRecord(job: job, now: now)
            jobs[job.id] = record
            track(record, from: nil)
            if job.state == .running {
                // It continues from its last checkpoint.
                transition(job.id, StateChange(.queued, reason: "daemon restarted"), now: now)
            } else if job.waitReason == .offline {
                // It probes its host again now rather than at its due time.
                waitForHost(record)
            }
        }
        armRetryTimer(now: now)
    }

    private mutating func adopt(_ job: Job, now: Timestamp) {
        let record = JobRecord(job: job, now: now)
        jobs[job.id] = record
        track(record, from: nil)
        var event = TransferEvent(.jobCreated, of: job)
        event.state = job.state
        event.bytesDone = job.bytesDone
        event.bytesTotal = job.bytesTotal
        event.batch = job.batch
        event.reason = "\(job.kind.rawValue) \(job.displayURL)"
        actions.append(.publish(event))
    }

    // MARK: Starting work

    /// Starts queued jobs — best priority, then oldest — while slots are free and their host is
    /// under its cap; then lets a queued high-priority job take a low one's slot.
    private mutating func startNext(now: Timestamp) {
        guard !stopping else { return }
        while let id = nextToStart(), let record = jobs[id] {
            let attempt = record.job.attempts + 1
            guard let started = transition(id, StateChange(.running, reason: "attempt \(attempt)"), now: now) else { continue }
            // The preparation records the attempt and the state together (not a record of its own).
            actions.removeLast()
            jobs[id]?.job.attempts = attempt
            jobs[id]?.phase = .attempt
            jobs[id]?.startToken = started.token
            actions.append(.startAttempt(started, attempt: attempt))
        }
        // A queued high job that cannot start takes the slot of the most recently started low
        // job, which is checkpointed and queued again; one at a time.
        if let (victim, high) = nextPreemption() {
            log(.info, "job \(victim): giving its slot to high-priority job \(high)")
            stop(victim, .suspend(.queued, reason: .preempted(by: high), acks: []))
        }
    }

    // The two questions to `Admission` read the jobs through a reference that ends with the
    // function: held across a change of `jobs`, it would copy the whole dictionary.

    private mutating func nextToStart() -> JobID? {
        let jobs = self.jobs
        return admission.next { Self.isQueued($0, in: jobs) }
    }

    private mutating func nextPreemption() -> (victim: JobID, for: JobID)? {
        let jobs = self.jobs
        return admission.preemption(isCurrent: { Self.isQueued($0, in: jobs) },
                                    preemptible: { jobs[$0]?.phase == .attempt })
    }

    /// The run queue's entry still stands for a queued job at that priority.
    private static func isQueued(_ entry: RunQueue.Entry, in jobs: [JobID: JobRecord]) -> Bool {
        guard let record = jobs[entry.id] else { return false }
        return record.job.state == .queued && record.job.priority.rank == entry.rank && record.host == entry.host
    }

    /// Takes a running job's transfer off the engine; `intent` applies once it has stopped.
    mutating func stop(_ id: JobID, _ intent: StopIntent) {
        jobs[id]?.phase = .stopping(intent)
        actions.append(.stop(id))
    }

    // MARK: Helpers

    mutating func nextToken() -> Int {
        lastToken += 1
        return lastToken
    }

    /// Publishes an event of `id`'s attempt, or keeps it until the attempt's start is recorded.
    mutating func publish(_ event: TransferEvent, of id: JobID) {
        if let token = jobs[id]?.startToken, unrecorded[token] != nil {
            unrecorded[token]?.then.append(event)
        } else {
            actions.append(.publish(event))
        }
    }

    mutating func log(_ level: Logger.Level, _ message: @autoclosure () -> String) {
        guard level >= settings.logLevel else { return }
        actions.append(.log(level, message()))
    }

    mutating func appendAction(_ action: SchedulerAction) {
        actions.append(action)
    }

    /// Draws the retry jitter.
    mutating func jitter(in range: ClosedRange<Double>) -> Double {
        Double.random(in: range, using: &random)
    }
}
