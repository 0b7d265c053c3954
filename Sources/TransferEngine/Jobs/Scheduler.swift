import Dispatch

/// Decides what every job does next: the state machine's owner. Commands and transfer outcomes
/// become state changes, each persisted before it is acted on; the engine only starts and stops
/// transfers when told. Thread: the loop thread.
public final class Scheduler {
    /// Everything the daemon's options set, with their defaults: the one place they are written
    /// (`transferd --help` prints these values).
    public struct Configuration: Sendable {
        /// Transfers running at once (`--max-active`).
        public var maxActive = 4
        /// Transfers to one `scheme://host:port` at once (`--max-per-host`).
        public var maxPerHost = 4
        /// Retries after a failed attempt for jobs that do not say (`--retry`; a job's own wins).
        public var defaultRetries = 7
        public var stateDirectory = ""
        /// A CA bundle for jobs that name none (`transferd --cacert`).
        public var cacert: String?
        /// An attempt that moves no byte for this many seconds is aborted and retried.
        public var stallSeconds = 60
        /// A job that moves no byte for this many seconds fails instead of retrying (as BITS does).
        public var noProgressSeconds = 30 * 60
        /// How many seconds a completion hook may run before it is killed.
        public var hookTimeoutSeconds = 60
        /// The date and time of day that timetables follow.
        public var wallClock = WallClock.system
        /// A download whose body passes this many bytes fails (`--max-filesize`; a job's own wins).
        public var maxFilesize: Int64?

        public init() {}

        var noProgressMilliseconds: Int64 { Int64(noProgressSeconds).saturatingMultiply(1000) }
        var hookTimeoutMilliseconds: Int { hookTimeoutSeconds.saturatingMultiply(1000) }
    }

    let configuration: Configuration
    let store: StoreQueue
    let files = FileQueue()
    /// Finishing downloads: many at once, each blocking on fsyncs.
    let finishing = SyncPool()
    /// Completion hooks: each blocks a thread while its command runs.
    let hookThreads = SyncPool(width: Scheduler.maxHooks)
    let multi: CurlMulti
    let loop: UVLoop
    let logger: Logger
    /// The global limits, one bucket per direction, shared by every transfer.
    let downBucket: SharedBucket
    let upBucket: SharedBucket
    /// The buckets' clock is the loop's, which its timers run on: a timer set for the moment a
    /// debt is repaid then fires when the bucket agrees it is (the real clock runs ahead of the
    /// loop's during a turn, which woke transfers early, to be paused again for another 1 ms).
    let clock: () -> Int64
    /// The configured global limits and timetable; the buckets hold what is in force now.
    var limits: LimitSettings
    var scheduleEntry: LimitSchedule.Entry?
    let retryPolicy = RetryPolicy()
    /// Set by the daemon once the loop exists; the way back onto this thread.
    var inbox: LoopInbox<Scheduler>!
    /// Every lifecycle event goes here: `events`, `events --follow`, and later `watch`.
    let events: EventBus
    private var progressTimer: UVTimer!
    var lastProgress: [JobID: Int64] = [:]

    /// Every job that may still move.
    var jobs: [JobID: ScheduledJob] = [:]
    /// Jobs that have ended in memory but whose end the store has not recorded yet: a read
    /// queued before that write still finds them unfinished (see `current`).
    var ending: [JobID: (token: Int, job: Job)] = [:]
    /// Work waiting for a job's end to be recorded (`show` of a job that just ended: its attempts
    /// and its state must come from the same record).
    var whenEndRecorded: [JobID: [() -> Void]] = [:]
    /// Which of them run, per host, which queued one starts next, and preemption (kept by `track`).
    var admission: Admission
    /// Waiting jobs by due time (entries of jobs that left `waiting` are dropped when they come up).
    var retryQueue = Heap<RetryEntry>()
    /// When each batch ends (its jobs' ends in memory and in the store).
    var batches = BatchLedger()
    /// Manifest chunks received so far, by connection and token.
    var staging = ManifestStaging()
    /// Completion hooks waiting for one of the `maxHooks` runners.
    var pendingHooks: [PendingHook] = []
    var hooksRunning = 0
    private var transfersByEasy: [ObjectIdentifier: JobID] = [:]
    /// Unreachable hosts being probed, by `scheme://host:port`, and the probes in the engine.
    var probes: [String: HostProbe] = [:]
    var probesByEasy: [ObjectIdentifier: String] = [:]
    /// The WebDAV collections of directory backups, made before the PUTs that need them.
    let collectionMaker: CollectionMaker
    var waiters: [Waiter] = []
    /// Loop-side continuations of store work, found again by token (closures that cross threads
    /// may only carry Sendable values).
    var pendingThen: [Int: (Result<Void, any Error>) -> Void] = [:]
    /// Bytes per second received and sent over the last tick, all transfers together.
    private(set) var downloadRate: Int64 = 0
    private(set) var uploadRate: Int64 = 0
    private var lastTick: (received: Int64, sent: Int64) = (0, 0)
    private var lastToken = 0
    private var retryTimer: UVTimer!
    private var tickTimer: UVTimer!
    private(set) var stopping = false

    public init(configuration: Configuration, limits: LimitSettings, store: StoreQueue, loop: UVLoop,
                logger: Logger) throws {
        self.limits = limits
        self.configuration = configuration
        admission = Admission(maxActive: configuration.maxActive, maxPerHost: configuration.maxPerHost)
        self.store = store
        self.logger = logger
        self.loop = loop
        clock = { [unowned loop] in loop.now }
        events = EventBus(logger: logger)
        downBucket = SharedBucket(loop: loop, rate: nil, clock: clock)
        upBucket = SharedBucket(loop: loop, rate: nil, clock: clock)
        multi = try CurlMulti(loop: loop)
        collectionMaker = CollectionMaker(multi: multi, logger: logger)
        multi.onDone = { [unowned self] easy, code in transferEnded(easy, code) }
        retryTimer = UVTimer(loop: loop) { [unowned self] in retryDueJobs() }
        tickTimer = UVTimer(loop: loop) { [unowned self] in tick() }
        progressTimer = UVTimer(loop: loop) { [unowned self] in publishProgress() }
    }

    /// Takes over the unfinished jobs of the store (a job that was running when the daemon
    /// stopped is queued again and continues from its last checkpoint), then starts work.
    public func start(with unfinished: [Job]) {
        for var job in unfinished {
            if job.state == .running {
                let change = StateChange(.queued, reason: "daemon restarted")
                job.apply(change)
                persist(job.id, change)
            }
            let scheduled = ScheduledJob(job: job, now: now)
            jobs[job.id] = scheduled
            track(scheduled, from: nil)
            // A job that was waiting for its host probes it again now rather than at its due time.
            if job.waitReason == .offline { waitForHost(scheduled) }
        }
        applyLimits()
        tickTimer.start(after: 1000, repeat: 1000)
        progressTimer.start(after: Self.progressInterval, repeat: Self.progressInterval)
        scheduleRetryTimer()
        startNext()
        resumeHooks()
    }

    /// The instant retry due times, the no-progress deadline and hook times are read at: the
    /// system's, as the store's records are (they are compared with each other). Timetables
    /// alone follow `configuration.wallClock`, which tests may start at an instant of theirs.
    var now: Timestamp { .now }

    /// The jobs running now.
    var running: [ScheduledJob] { admission.running.keys.compactMap { jobs[$0] } }

    // MARK: Starting work

    func begin(_ scheduled: ScheduledJob) {
        loop.assertOnLoopThread()
        precondition(scheduled.job.state.canTransition(to: .running))
        var event = TransferEvent(.state, job: scheduled.id)
        event.state = .running
        event.from = scheduled.job.state
        event.reason = "attempt \(scheduled.job.attempts + 1)"
        let started = event
        let old = scheduled.job.state
        // In memory as `JobStore.beginAttempt` records it (with the attempt, on the store's queue).
        scheduled.job.apply(StateChange(.running))
        scheduled.job.attempts += 1
        track(scheduled, from: old)
        let job = scheduled.job
        let attempt = job.attempts
        stored({ store in try AttemptPreparation.prepare(job, attempt: attempt, in: store) }) { scheduler, result in
            // Published once recorded, so that events keep the order of the store's changes.
            scheduler.events.publish(started)
            scheduler.attemptPrepared(job.id, attempt: attempt, result)
        }
    }

    private func attemptPrepared(_ id: JobID, attempt: Int, _ result: Result<AttemptPreparation, any Error>) {
        guard let scheduled = jobs[id], scheduled.job.state == .running, scheduled.job.attempts == attempt else {
            return  // paused, cancelled or stopping meanwhile: that change is already persisted
        }
        switch result {
        case .success(.ready(let file, let resume, let startedOver)):
            if let startedOver {
                logger.warn("job \(id): \(startedOver.message); starting over from byte 0")
                scheduled.job.bytesDone = 0
            }
            launchDownload(scheduled, attempt: attempt, url: scheduled.job.url, headers: scheduled.job.requestHeaders,
                           file: file, resume: resume)
        case .success(.upload(let body, let collections)):
            makeCollections(collections, for: scheduled, attempt: attempt) { [unowned self] in
                launch(scheduled, attempt: attempt) { () throws(TransferError) -> any Transfer in
                    logger.debug("job \(id): attempt \(attempt) sends \(body.contentLength) bytes")
                    let pacer = Pacer(loop: loop, global: upBucket, rate: scheduled.job.limit, clock: clock)
                    return try UploadTransfer(jobID: id, attempt: attempt, url: scheduled.job.url,
                                              method: scheduled.job.method ?? "POST", headers: scheduled.job.requestHeaders,
                                              tls: tlsOptions(scheduled.job), body: body, pacer: pacer,
                                              stallSeconds: configuration.stallSeconds)
                }
            }
        case .success(.finalize(let file, let resume)):
            finalize(scheduled, attempt: attempt, file: file, state: resume, transfer: nil)
        case .success(.alreadyComplete):
            ended(scheduled, StateChange(.completed, reason: "finished before the daemon stopped"))
        case .failure(let error as TransferError):
            conclude(scheduled, attempt: attempt, outcome: .failed(error), transfer: nil)
        case .failure(let error):
            logger.error("job \(id): cannot start: \(error)")
            conclude(scheduled, attempt: attempt, outcome: .failed(.io(path: scheduled.job.path ?? "", operation: "prepare", errno: 0)), transfer: nil)
        }
    }

    // MARK: Transfers

    /// The job's TLS settings, with the daemon's CA bundle when the job names none.
    func tlsOptions(_ job: Job) -> TLSOptions {
        var tls = job.tls
        if tls.cacert == nil { tls.cacert = configuration.cacert }
        return tls
    }

    /// Starts a download attempt's request to `url`: the job's own, or a step of a redirect that
    /// transferd follows itself (`RedirectGuard`; `redirectsLeft` then counts down).
    func launchDownload(_ scheduled: ScheduledJob, attempt: Int, url: String, headers: [String],
                        redirectsLeft: Int = RedirectGuard.maxRedirects, file: PartialFile, resume: ResumeState) {
        let id = scheduled.id
        let first = redirectsLeft == RedirectGuard.maxRedirects
        launch(scheduled, attempt: attempt, announced: first) { () throws(TransferError) -> any Transfer in
            let pacer = Pacer(loop: loop, global: downBucket, rate: scheduled.job.limit, clock: clock)
            let tls = tlsOptions(scheduled.job)
            let transfer = try DownloadTransfer(jobID: id, attempt: attempt, url: url, headers: headers, tls: tls,
                                                redirects: RedirectGuard(jobURL: scheduled.job.url, tls: tls),
                                                redirectsLeft: redirectsLeft, pacer: pacer,
                                                stallSeconds: configuration.stallSeconds,
                                                maxFilesize: scheduled.job.maxFilesize ?? configuration.maxFilesize,
                                                file: file, resume: resume)
            transfer.onCheckpointDue = { [unowned self] in checkpoint($0) }
            transfer.onNeedsTruncation = { [unowned self] in truncate($0) }
            if first { logger.debug("job \(id): attempt \(attempt) from byte \(resume.bytesDurable)") }
            return transfer
        }
    }

    /// Creates the attempt's transfer and hands its easy handle to the engine; `announced`:
    /// publishes that the attempt started (not again for a step of a redirect).
    private func launch(_ scheduled: ScheduledJob, attempt: Int, announced: Bool = true,
                        _ make: () throws(TransferError) -> any Transfer) {
        let transfer: any Transfer
        do {
            transfer = try make()
            try multi.add(transfer.easy)
        } catch let error as TransferError {
            return conclude(scheduled, attempt: attempt, outcome: .failed(error), transfer: nil)
        } catch {
            return conclude(scheduled, attempt: attempt, outcome: .failed(.network("cannot start the transfer: \(error)")),
                            transfer: nil)
        }
        scheduled.transfer = transfer
        transfersByEasy[ObjectIdentifier(transfer.easy)] = scheduled.id
        guard announced else { return }
        var event = TransferEvent(.attemptStarted, job: scheduled.id)
        event.attempt = attempt
        event.bytesDone = scheduled.live.bytesDone
        event.bytesTotal = scheduled.live.bytesTotal
        events.publish(event)
    }

    private func transferEnded(_ easy: CurlEasy, _ code: CurlCode) {
        loop.assertOnLoopThread()
        if probeEnded(easy, code) || collectionMaker.ended(easy, code) { return }
        guard let id = transfersByEasy.removeValue(forKey: ObjectIdentifier(easy)),
              let scheduled = jobs[id], let transfer = scheduled.transfer, transfer.easy === easy
        else { return }
        let outcome = transfer.outcome(code)
        transfer.stop()
        transfer.whenIdle { [unowned self] in
            conclude(scheduled, attempt: transfer.attempt, outcome: outcome, transfer: transfer)
        }
    }

    /// Takes a running transfer off the engine now; `then` runs once its checkpoints are on disk.
    func stopTransfer(of scheduled: ScheduledJob, then: @escaping ((any Transfer)?) -> Void) {
        guard let transfer = scheduled.transfer else { return then(nil) }
        multi.remove(transfer.easy)
        transfersByEasy[ObjectIdentifier(transfer.easy)] = nil
        transfer.stop()
        transfer.whenIdle { then(transfer) }
    }

    private func tick() {
        loop.assertOnLoopThread()
        abortStalledTransfers()
        var received: Int64 = 0
        var sent: Int64 = 0
        for scheduled in running {
            let bytes = scheduled.live.bytesDone
            scheduled.rate = max(0, bytes - (scheduled.bytesAtLastTick ?? bytes))
            scheduled.bytesAtLastTick = bytes
            guard let transfer = scheduled.transfer else { continue }
            switch transfer.direction {
            case .down: received += transfer.transferred
            case .up: sent += transfer.transferred
            }
            transfer.tick()
        }
        applyLimits()
        preemptIfNeeded()
        // Transfers that ended since the last tick make the sums drop: never report less than 0.
        downloadRate = max(0, received - lastTick.received)
        uploadRate = max(0, sent - lastTick.sent)
        lastTick = (received, sent)
    }

    /// An attempt that moved no byte for `stallSeconds` (and is not held back by a limit) is
    /// aborted and retried. libcurl's low-speed check averages over seconds, so a burst
    /// followed by silence would take several times longer to notice.
    private func abortStalledTransfers() {
        let now = Monotonic.now
        for scheduled in running {
            guard let transfer = scheduled.transfer, !transfer.isThrottled,
                  now - transfer.lastActivity > Double(transfer.stallSeconds) else { continue }
            logger.info("job \(scheduled.id): attempt \(transfer.attempt) moved no byte for \(transfer.stallSeconds) s; retrying")
            stopTransfer(of: scheduled) { [unowned self] stopped in
                conclude(scheduled, attempt: transfer.attempt, outcome: .failed(.stalled(seconds: transfer.stallSeconds)),
                         transfer: stopped)
            }
        }
    }

    // MARK: Retry timer

    /// Sets the retry timer for the earliest waiting job (stale entries dropped on the way).
    func scheduleRetryTimer() {
        while let first = retryQueue.first, !isDue(first) { retryQueue.pop() }
        guard let due = retryQueue.first?.due else { return retryTimer.stop() }
        retryTimer.start(after: UInt64(max(0, due.rawValue - now.rawValue)))
    }

    private func retryDueJobs() {
        let now = self.now
        while let first = retryQueue.first, first.due <= now {
            retryQueue.pop()
            if isDue(first), let scheduled = jobs[first.id] {
                change(scheduled, StateChange(.queued, reason: "retrying"))
            }
        }
        scheduleRetryTimer()
        startNext()
    }

    /// The entry still stands for a job waiting until that time.
    private func isDue(_ entry: RetryEntry) -> Bool {
        guard let job = jobs[entry.id]?.job else { return false }
        return job.state == .waiting && job.nextAttemptAt == entry.due
    }

    // MARK: State changes

    /// Changes an unfinished job's state in memory and in the store (in that order; the store's
    /// queue keeps every change in order). With `syncing`, that file's bytes are made durable
    /// first; with `removing`, that partial file is deleted first (a cancel frees its space even
    /// when the store cannot record it yet, and a cancel said again then converges). Ended jobs
    /// leave memory and wake their waiters.
    func change(_ scheduled: ScheduledJob, _ change: StateChange, syncing file: PartialFile? = nil,
                removing partialPath: String? = nil,
                alsoRecord extra: (@Sendable (JobStore) throws -> Void)? = nil,
                then: ((Result<Void, any Error>) -> Void)? = nil) {
        loop.assertOnLoopThread()
        precondition(scheduled.job.state.canTransition(to: change.state),
                     "illegal transition \(scheduled.job.state) -> \(change.state)")
        var event = TransferEvent(.state, job: scheduled.id)
        event.from = scheduled.job.state
        event.state = change.state
        event.reason = change.reason
        event.error = change.error
        let published = event
        let old = scheduled.job.state
        scheduled.job.apply(change)
        track(scheduled, from: old)
        let id = scheduled.id
        let job = scheduled.job
        let token = nextToken()
        if change.state.hasEnded {
            jobs[id] = nil
            ending[id] = (token, job)
            if let batch = job.batch { batches.endSent(batch: batch) }
        }
        // A hook the end makes due is recorded with it, so it runs even if the daemon stops first.
        let hook = change.state.hasEnded ? PendingHook.forJob(job) : nil
        if let then { pendingThen[token] = then }
        let record: @Sendable (JobStore) throws -> Void = { store in
            try store.transaction {
                try store.setState(id, change)
                try extra?(store)
                if let hook { try store.addPendingHook(hook) }
            }
        }
        let recorded: @Sendable (Scheduler, Result<Void, any Error>) -> Void = { scheduler, result in
            if case .failure(let error) = result {
                scheduler.logger.error("job \(id): cannot record \(change.state): \(error)")
            }
            scheduler.events.publish(published)
            if job.state.hasEnded {
                if scheduler.ending[id]?.token == token {
                    scheduler.ending[id] = nil
                    for work in scheduler.whenEndRecorded.removeValue(forKey: id) ?? [] { work() }
                }
                scheduler.jobEnded(job)
            }
            if let hook, case .success = result { scheduler.enqueue(hook) }
            scheduler.pendingThen.removeValue(forKey: token)?(result)
        }
        if let file {
            durably({ try file.sync() }, record: record, then: recorded)
        } else if let partialPath {
            durably({ PartialFile.remove(partialPath) }, record: record, then: recorded)
        } else {
            stored(record, then: recorded)
        }
    }

    /// A job read from the store as the loop knows it now: live bytes while it runs, its end as
    /// soon as it has ended. Without this a reply would mix the store's older snapshot with the
    /// loop's newer one (a job just ended still running beside the job that took its slot).
    func current(_ stored: Job) -> Job {
        jobs[stored.id]?.live ?? ending[stored.id]?.job ?? stored
    }

    /// A state change of a job that is not (or no longer) in memory.
    func persist(_ id: JobID, _ change: StateChange) {
        stored({ store in try store.setState(id, change) }) { scheduler, result in
            if case .failure(let error) = result { scheduler.logger.error("job \(id): cannot record \(change.state): \(error)") }
        }
    }

    /// The job ended; `removing` is a partial file to delete before the end is recorded (once it
    /// is, the destination may belong to another job, whose partial file a later delete would hit).
    func ended(_ scheduled: ScheduledJob, _ stateChange: StateChange, removing partialPath: String? = nil,
               alsoRecord extra: (@Sendable (JobStore) throws -> Void)? = nil) {
        scheduled.detach()
        change(scheduled, stateChange, removing: partialPath, alsoRecord: extra)
        startNext()
    }

    // MARK: Getting back onto the loop

    func nextToken() -> Int {
        lastToken += 1
        return lastToken
    }

    /// Runs `work` on the store's queue, then `then` on the loop thread.
    func stored<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T,
                             then: @escaping @Sendable (Scheduler, Result<T, any Error>) -> Void) {
        loop.assertOnLoopThread()
        let inbox = inbox!
        store.async(work) { result in inbox.post { then($0, result) } }
    }

    /// Syncs on the file queue, records in the store, then continues on the loop thread: the order
    /// that makes a recorded length always durable.
    func durably<T: Sendable>(_ sync: @escaping @Sendable () throws -> Void,
                              record: @escaping @Sendable (JobStore) throws -> T,
                              then: @escaping @Sendable (Scheduler, Result<T, any Error>) -> Void) {
        let inbox = inbox!
        let store = store
        files.async {
            do {
                try sync()
            } catch {
                return inbox.post { then($0, .failure(error)) }
            }
            store.async(record) { result in inbox.post { then($0, result) } }
        }
    }

    // MARK: Stopping

    /// Checkpoints every running transfer, records it as queued again, then calls `done`.
    func shutdown(_ done: @escaping () -> Void) {
        stopping = true
        tickTimer.stop()
        retryTimer.stop()
        var remaining = 1
        let finishOne = {
            remaining -= 1
            if remaining == 0 { done() }
        }
        for scheduled in running {
            remaining += 1
            suspend(scheduled, to: .queued, reason: "daemon stopped") { _ in finishOne() }
        }
        finishOne()
    }
}
