import Dispatch

/// The shell around the decision core: it feeds the core events (commands, attempt ends, records,
/// timers, probes) and performs the actions it returns — records on the store's queue, transfers
/// on the engine (`CurlMulti`), files on the file queue and in finishing groups, events, hooks,
/// answers.
/// It decides nothing itself. Thread: the loop thread.
public final class Scheduler {
    /// Everything the daemon's options set, with their defaults: the one place they are written
    /// (`transferd --help` prints these values).
    public struct Configuration: Sendable {
        /// Transfers running at once (`--max-active`).
        public var maxActive = 4
        /// Transfers to one `scheme://host:port` at once (`--max-per-host`).
        public var maxPerHost = 4
        /// Downloads being made durable beside the transfers, each with its file open: the
        /// daemon sets it from its descriptors (`DescriptorBudget.finishing`; nil: as many as
        /// `Admission.jobsPerSlot` allows).
        public var maxFinishing: Int?
        /// Retries after a failed attempt for jobs that do not say (`--retry`; a job's own wins).
        public var defaultRetries = 7
        public var stateDirectory = ""
        /// A CA bundle for jobs that name none (`transferd --cacert`).
        public var cacert: String?
        /// An attempt that moves no byte for this many seconds is aborted and retried.
        public var stallSeconds = 60
        /// An attempt that moves less than `speedLimit` bytes a second on average for
        /// `speedSeconds` (not held back by a limit) is aborted and retried, giving its slot
        /// to the next job (`--speed-limit`, `--speed-time`; 0: never).
        public var speedLimit: Int64 = 100
        public var speedSeconds = 60
        /// A job that moves no byte for this many seconds fails instead of retrying (as BITS does).
        public var noProgressSeconds = 30 * 60
        /// How many seconds a completion hook may run before it is killed.
        public var hookTimeoutSeconds = 60
        /// The date and time of day that timetables follow.
        public var wallClock = WallClock.system
        /// A download whose body passes this many bytes fails (`--max-filesize`; a job's own wins).
        public var maxFilesize: Int64?
        /// `--keep-history`: ended jobs older than this are pruned at start and every hour;
        /// nil keeps every job.
        public var keepHistory: Age?

        public init() {}

        var noProgressMilliseconds: Int64 { Int64(noProgressSeconds).saturatingMultiply(1000) }
        var hookTimeoutMilliseconds: Int { hookTimeoutSeconds.saturatingMultiply(1000) }
    }

    let configuration: Configuration
    let store: StoreQueue
    let files = FileQueue()
    /// Opening attempts' files: many at once, those of one directory one after another.
    let fileThreads = SyncPool()
    /// Verifying finished downloads (sha256), apart: a long hash holds no file's opening up.
    let hashThreads = SyncPool()
    /// Making finished downloads durable and renamed, in groups.
    let finishGroup: FinishGroup
    /// Completion hooks: each blocks a thread while its command runs.
    let hookThreads: SyncPool
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
    /// Set by the daemon once the loop exists; the way back onto this thread.
    var inbox: LoopInbox<Scheduler>!
    /// Every lifecycle event goes here: `events`, `events --follow`, and later `watch`.
    let events: EventBus
    private var progressTimer: UVTimer!
    var lastProgress: [JobID: Int64] = [:]

    /// Every decision: jobs, queues, slots, retries, batches, waiters, hooks.
    private(set) var core: SchedulerCore
    /// Events waiting to be handled: an action may report the next event at once (a stop of a
    /// job with no transfer yet), which is handled after the actions of the current one.
    private var eventQueue: [SchedulerEvent] = []
    private var draining = false
    /// The engine's side of each running job.
    var engine: [JobID: EngineJob] = [:]
    /// Attempts being prepared, with the stops asked for meanwhile: a stop waits until its
    /// attempt is recorded and its file open, so that its own record and file removal follow them.
    private var preparing: [JobID: [() -> Void]] = [:]
    var transfersByEasy: [ObjectIdentifier: JobID] = [:]
    /// Unreachable hosts being probed, by `scheme://host:port`, and the probes in the engine.
    var probes: [String: HostProbe] = [:]
    var probesByEasy: [ObjectIdentifier: String] = [:]
    /// The WebDAV collections of directory backups, made before the PUTs that need them.
    let collectionMaker: CollectionMaker
    /// Tells servers to discard the unfinished uploads of cancelled jobs.
    var sessionDiscarder: SessionDiscarder!
    /// Work waiting for a job's end to be recorded (`show` of a job that just ended: its attempts
    /// and its state must come from the same record).
    var whenEndRecorded: [JobID: [() -> Void]] = [:]
    /// Answers the core will give, by token: commands' and `wait`s.
    var acknowledgements: [Int: (Result<Job, CommandRefusal>) -> Void] = [:]
    var answers: [Int: ([Job]) -> Void] = [:]
    /// Manifest chunks received so far, by connection and token.
    var staging = ManifestStaging()
    /// Loop-side continuations of reads (`read`), found again by token: closures that cross
    /// threads may only carry Sendable values.
    var pendingReads: [Int: () -> Void] = [:]
    /// Downloads whose checkpoint or truncation is on its way to disk, by token.
    var durableSteps: [Int: DownloadTransfer] = [:]
    /// Downloads' starts not recorded yet, and what records them when their jobs record
    /// nothing sooner (`Scheduler+HeldStarts`).
    var heldStarts: [JobID: HeldStart] = [:]
    var heldStartTimer: UVTimer!
    /// Jobs taken over from the store at the start whose first attempt here has not begun: their
    /// plans are read (`AttemptPreparation.Plan.make`).
    var jobsFromLastRun: Set<JobID> = []
    /// Prunes waiting for their chunk's deletion, by token (loop-owned continuations).
    var pruneDeletions: [Int: (Result<PruneOutcome, any Error>) -> Void] = [:]
    /// `--keep-history`'s hourly prune, and whether one is under way.
    var historyTimer: UVTimer?
    var historyPruning = false
    private var shutdownDone: (() -> Void)?
    private var lastAnswerToken = 0
    /// Bytes per second received and sent over the last tick, all transfers together.
    private(set) var downloadRate: Int64 = 0
    private(set) var uploadRate: Int64 = 0
    private var lastTick: (received: Int64, sent: Int64) = (0, 0)
    private var retryTimer: UVTimer!
    private var tickTimer: UVTimer!

    public init(configuration: Configuration, limits: LimitSettings, store: StoreQueue, loop: UVLoop,
                logger: Logger) throws {
        self.limits = limits
        self.configuration = configuration
        var settings = SchedulerCore.Settings()
        settings.maxActive = configuration.maxActive
        settings.maxPerHost = configuration.maxPerHost
        settings.maxFinishing = configuration.maxFinishing
        settings.noProgressMilliseconds = configuration.noProgressMilliseconds
        settings.logLevel = logger.level
        core = SchedulerCore(settings: settings, seed: UInt64.random(in: .min ... .max))
        hookThreads = SyncPool(width: settings.maxHooks)
        self.store = store
        finishGroup = FinishGroup(store: store)
        self.logger = logger
        self.loop = loop
        clock = { [unowned loop] in loop.now }
        events = EventBus(logger: logger)
        downBucket = SharedBucket(loop: loop, rate: nil, clock: clock)
        upBucket = SharedBucket(loop: loop, rate: nil, clock: clock)
        // Room for every running transfer's connection, a few times over (libcurl's own rule).
        multi = try CurlMulti(loop: loop, idleConnections: configuration.maxActive.saturatingMultiply(4))
        collectionMaker = CollectionMaker(multi: multi, logger: logger)
        multi.onDone = { [unowned self] easy, code in transferEnded(easy, code) }
        sessionDiscarder = SessionDiscarder(multi: multi, logger: logger) { [unowned self] id in forgetSession(of: id) }
        retryTimer = UVTimer(loop: loop) { [unowned self] in feed(.retryDue) }
        tickTimer = UVTimer(loop: loop) { [unowned self] in tick() }
        progressTimer = UVTimer(loop: loop) { [unowned self] in publishProgress() }
        heldStartTimer = UVTimer(loop: loop) { [unowned self] in recordHeldStarts() }
    }

    /// Takes over the unfinished jobs of the store (a job that was running when the daemon
    /// stopped is queued again and continues from its last checkpoint), then starts work.
    public func start(with unfinished: [Job]) {
        applyLimits()
        tickTimer.start(after: 1000, repeat: 1000)
        progressTimer.start(after: Self.progressInterval, repeat: Self.progressInterval)
        jobsFromLastRun = Set(unfinished.lazy.map(\.id))
        feed(.restarted(unfinished))
        discardLeftSessions()
        resumeHooks()
        // After the hooks: a batch whose end was not judged when the daemon stopped is judged
        // (its hook recorded as due) before any prune can read its jobs.
        startHistoryTimer()
    }

    /// The one clock of decisions and records: retry due times, the no-progress deadline, hook
    /// times and the store's timestamps. Timetables alone follow `configuration.wallClock`,
    /// which tests may start at an instant of theirs.
    var now: Timestamp { .now }

    /// The job as clients should see it: in memory (with the live bytes of its transfer), as it
    /// ended while that is on its way to the store, or as the store had it.
    func current(_ stored: Job) -> Job {
        guard let job = core.job(stored.id) else { return stored }
        return engine[stored.id]?.live(job) ?? job
    }

    // MARK: Events in, actions out

    /// Hands `event` to the core and performs what it decides (and what that leads to, in order).
    /// Events that come while one is being performed wait in `eventQueue`; the first is handed
    /// over as it is. The answer's actions are moved out of it, not copied (each is up to a
    /// kilobyte with references to retain: docs/design.md, "Facts that cost time").
    func feed(_ event: SchedulerEvent) {
        loop.assertOnLoopThread()
        guard !draining else { return eventQueue.append(event) }
        draining = true
        defer { draining = false }
        perform(core.handle(event, now: now))
        while !eventQueue.isEmpty {
            let next = eventQueue.removeFirst()
            perform(core.handle(next, now: now))
        }
    }

    /// Performs the core's answer in order, each action moved out of it rather than copied (an
    /// array's iterator copies every element), and hands the emptied buffer back. Reversed in
    /// place first (the buffer's own swaps move; `Array.reverse` copies), then taken from the end.
    private func perform(_ answer: consuming [SchedulerAction]) {
        answer.withUnsafeMutableBufferPointer { $0.reverse() }
        while let action = answer.popLast() { perform(action) }
        core.recycle(answer)
    }

    private func perform(_ action: consuming SchedulerAction) {
        switch consume action {
        case .record(let record): self.record(record)
        case .startAttempt(let record, let attempt): prepare(record, attempt: attempt)
        case .stop(let id): stopTransfer(of: id) { [unowned self] report in feed(.stopped(id, report)) }
        case .finalize(let id, let report, let completion): finalize(id, report, completion: completion)
        case .publish(let event): events.publish(event)
        case .probe(let jobURL, let route): probe(jobURL, route: route)
        case .armRetryTimer(let due):
            if let due { retryTimer.start(after: UInt64(max(0, due.rawValue.saturatingSubtract(now.rawValue)))) } else { retryTimer.stop() }
        case .claimDestination(let id, let path):
            stored({ store in try store.claimDestination(of: id, path: path) }) { scheduler, result in
                scheduler.feed(.destinationClaimed(id, result.mapError { CommandRefusal(claiming: id, $0) }))
            }
        case .runHook(let hook): run(hook)
        case .batchEnded(let batch, let announce):
            collectionMaker.forget(batch: batch)
            batchEnded(batch, announce: announce)
        case .endRecorded(let id):
            // A completion its finishing group recorded had no record action to let its engine side go.
            if engine[id]?.transfer == nil { engine[id] = nil }
            for work in whenEndRecorded.removeValue(forKey: id) ?? [] { work() }
        case .prune(let token, let candidates): deletePruned(token, candidates)
        case .answer(let token, let jobs): answers.removeValue(forKey: token)?(jobs)
        case .acknowledge(let token, let result): acknowledgements.removeValue(forKey: token)?(result.map(current))
        case .log(let level, let message): logger.log(level, message)
        case .shutdownComplete:
            shutdownDone?()
            shutdownDone = nil
        }
    }

    /// Records a state change with what goes with it: the partial file's bytes made durable (or
    /// the file removed) first, then one transaction; the core hears when it is recorded.
    private func record(_ record: StateRecord) {
        var record = record
        record.heldStart = heldStarts.removeValue(forKey: record.id)
        let token = record.token
        let write: @Sendable (JobStore) throws -> Void = { [record] store in try record.write(to: store) }
        let discards = record.discardsUpload
        let id = record.id
        let started = record.heldStart?.token
        let recorded: @Sendable (Scheduler, Result<Void, any Error>) -> Void = { scheduler, result in
            if let started { scheduler.feed(.recorded(token: started, error: result.failureDescription)) }
            scheduler.feed(.recorded(token: token, error: result.failureDescription))
            if discards, case .success = result { scheduler.discardSession(of: id) }
        }
        let file = engine[record.id]?.file
        if engine[record.id]?.transfer == nil { engine[record.id] = nil }
        // A state change has happened: no transfer waits on its record to go on, only perhaps
        // a client.
        let deferrable = !record.awaited
        switch record.partial {
        case .sync:
            guard let file else { return stored(write, deferrable: deferrable, then: recorded) }
            durably({ try file.sync() }, record: write, deferrable: deferrable, then: recorded)
        case .remove(let path):
            durably({ PartialFile.remove(path) }, record: write, deferrable: deferrable, then: recorded)
        case .none:
            stored(write, deferrable: deferrable, then: recorded)
        }
    }

    // MARK: Starting work

    /// Prepares the attempt (`AttemptPreparation`: the store read unless the job tells all of it,
    /// the files opened on a file thread, the attempt and its `running` state recorded), then
    /// starts it. A download starts as soon as its file is ready, its start held to be recorded
    /// with the job's next record (`Scheduler+HeldStarts`; the core holds the attempt's events
    /// until it is, and fails the attempt if it cannot be);
    /// an upload waits for the record, so that a restarted daemon knows its request may have
    /// been sent.
    private func prepare(_ record: StateRecord, attempt: Int) {
        guard let job = core.jobs[record.id]?.job else { return }
        let id = job.id
        let at = record.at
        let (store, threads, inbox) = (store, fileThreads, inbox!)
        logger.debug("job \(id): preparing attempt \(attempt)")
        preparing[id] = []
        // Files of one directory are opened one at a time (the directory's lock serializes them).
        let directory = job.path.map(PartialFile.directory(of:)) ?? job.outputDirectory ?? ""
        let fromLastRun = jobsFromLastRun.remove(id) != nil
        let open: @Sendable ([String]) -> Void = { headers in
            AttemptPreparation.Plan.make(job, attempt: attempt, at: at, fromLastRun: fromLastRun, store: store) { planned in
                threads.async(key: directory) {
                    // An S3 job's object, endpoint and credentials, read afresh for each attempt.
                    let access: S3Access?
                    do {
                        access = job.remote?.kind == .s3 ? try S3Access(job) : nil
                    } catch {
                        return inbox.post { scheduler in
                            scheduler.feed(.recorded(token: record.token, error: nil))
                            scheduler.prepared(id, attempt: attempt, .failure(error), headers: headers, s3: nil)
                        }
                    }
                    let done: @Sendable (Result<AttemptPreparation, any Error>) -> Void = { result in
                        inbox.post { scheduler in
                            scheduler.feed(.recorded(token: record.token, error: nil))
                            scheduler.prepared(id, attempt: attempt, result, headers: headers, s3: access)
                        }
                    }
                    let opened = planned.flatMap { plan in Result { try AttemptPreparation.open(plan) } }
                    guard case .success(let plan) = planned, case .success(let preparation) = opened else { return done(opened) }
                    if case .ready = preparation {
                        // A download starts at once: a start from byte 0 is recorded with the
                        // job's next record; another is asked of the store before anything the
                        // loop records after the transfer starts.
                        if let begin = preparation.begin(plan), let held = HeldStart(token: record.token, begin) {
                            return inbox.post { scheduler in
                                scheduler.hold(held)
                                scheduler.prepared(id, attempt: attempt, opened, headers: headers, s3: access)
                            }
                        }
                        store.async({ store in try preparation.record(plan, in: store) }, deferrable: true) { result in
                            inbox.post { $0.feed(.recorded(token: record.token, error: result.failureDescription)) }
                        }
                        return inbox.post { $0.prepared(id, attempt: attempt, opened, headers: headers, s3: access) }
                    }
                    store.async({ store in
                        try preparation.record(plan, in: store)
                        return preparation
                    }, completion: done)
                }
            }
        }
        guard let command = job.headerCommand else { return open([]) }
        // Credentials first, on a hook thread: a slow helper holds up no one else's files.
        hookThreads.async {
            switch HeaderCommand.run(command, job: job, attempt: attempt) {
            case .success(let headers):
                open(headers)
            case .failure(let error):
                inbox.post { scheduler in
                    scheduler.feed(.recorded(token: record.token, error: nil))
                    scheduler.prepared(id, attempt: attempt, .failure(error), headers: [], s3: nil)
                }
            }
        }
    }

    /// `headers`: what `--header-command` added for this attempt (a secret: only sent); `s3`: an
    /// S3 job's object, endpoint and credentials.
    private func prepared(_ id: JobID, attempt: Int, _ result: Result<AttemptPreparation, any Error>, headers: [String],
                          s3: S3Access?) {
        let stops = preparing.removeValue(forKey: id) ?? []
        defer { for stop in stops { stop() } }
        guard core.isCurrentAttempt(id, attempt), let job = core.jobs[id]?.job else {
            return  // paused, cancelled or stopping meanwhile: the stop applies now
        }
        switch result {
        case .success(.ready(let file, let resume, let startedOver)):
            if let startedOver { logger.warn("job \(id): \(startedOver.message); starting over from byte 0") }
            let url = s3.map { $0.location.objectURL($0.endpoint) } ?? job.url
            // What the header command printed is a secret, whatever its names (a token, a vault's header).
            launchDownload(job, attempt: attempt, url: url, headers: job.requestHeaders + headers,
                           secretNames: RedirectGuard.names(headers), signing: s3?.signing,
                           origin: s3 == nil ? nil : url, file: file, resume: resume)
        case .success(.upload(let body, let collections)):
            makeCollections(collections, for: job, attempt: attempt) { [unowned self] in
                launch(id, attempt: attempt) { () throws(TransferError) -> any Transfer in
                    logger.debug("job \(id): attempt \(attempt) sends \(body.contentLength) bytes")
                    let pacer = Pacer(loop: loop, global: upBucket, rate: job.limit, clock: clock)
                    return try UploadTransfer(jobID: id, attempt: attempt, url: job.url, method: job.method ?? "POST",
                                              headers: job.requestHeaders + headers, tls: tlsOptions(job), network: job.network,
                                              body: body, pacer: pacer, stallSeconds: configuration.stallSeconds)
                }
            }
        case .success(.session(let reader, let session, let parts)):
            launchSession(job, attempt: attempt, reader: reader, session: session, parts: parts, headers: headers, s3: s3)
        case .success(.finalize(let file, let resume)):
            let engineJob = self.engineJob(id)
            engineJob.file = file
            engineJob.resume = resume
            feed(.readyToFinalize(id, attempt: attempt))
        case .success(.alreadyComplete(let resume)):
            feed(.alreadyComplete(id, attempt: attempt, bytes: resume.bytesDurable, total: resume.bytesTotal))
        case .failure(let error):
            if !(error is TransferError) { logger.error("job \(id): cannot start: \(error)") }
            let failure = error as? TransferError ?? .io(path: job.path ?? "", operation: "prepare: \(error)", errno: 0)
            feed(.attemptEnded(id, AttemptReport(attempt: attempt, outcome: .failed(failure))))
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
    /// transferd follows itself (`RedirectGuard`; `redirectsLeft` then counts down, and the
    /// attempt's `deadline` goes on).
    /// `origin`: where the job's secrets (credentials, an S3 signature) may go, when not the
    /// job's URL (an S3 object's URL at its endpoint).
    func launchDownload(_ job: Job, attempt: Int, url: String, headers: [String], secretNames: Set<String> = [],
                        signing: AWSSigning? = nil, origin: String? = nil, redirectsLeft: Int = RedirectGuard.maxRedirects,
                        deadline: AttemptDeadline? = nil, file: PartialFile, resume: ResumeState) {
        let id = job.id
        let first = redirectsLeft == RedirectGuard.maxRedirects
        let deadline = first ? AttemptDeadline(maxTime: job.network.maxTime) : deadline
        launch(id, attempt: attempt, announced: first) { () throws(TransferError) -> any Transfer in
            let pacer = Pacer(loop: loop, global: downBucket, rate: job.limit, clock: clock)
            let tls = tlsOptions(job)
            let transfer = try DownloadTransfer(jobID: id, attempt: attempt, url: url, headers: headers, tls: tls,
                                                network: job.network, deadline: deadline,
                                                redirects: RedirectGuard(jobURL: origin ?? job.url, tls: tls,
                                                                         secretNames: secretNames),
                                                redirectsLeft: redirectsLeft, pacer: pacer,
                                                stallSeconds: configuration.stallSeconds,
                                                maxFilesize: job.maxFilesize ?? configuration.maxFilesize,
                                                signing: signing, file: file, resume: resume)
            transfer.onCheckpointDue = { [unowned self] in checkpoint($0) }
            transfer.onWritebackDue = { [files] file, range in files.async { file.startWriteback(range) } }
            transfer.onNeedsTruncation = { [unowned self] in truncate($0) }
            transfer.namesFile = job.path == nil && job.outputDirectory != nil
            transfer.onNameChosen = { [unowned self] in name($0, $1) }
            if first { logger.debug("job \(id): attempt \(attempt) from byte \(resume.bytesDurable)") }
            return transfer
        }
    }

    /// Creates the attempt's transfer and hands its easy handle to the engine; `announced`:
    /// publishes that the attempt started (not again for a step of a redirect).
    func launch(_ id: JobID, attempt: Int, announced: Bool = true,
                        _ make: () throws(TransferError) -> any Transfer) {
        let transfer: any Transfer
        do {
            transfer = try make()
            try multi.add(transfer.easy)
        } catch let error as TransferError {
            return feed(.attemptEnded(id, AttemptReport(attempt: attempt, outcome: .failed(error))))
        } catch {
            return feed(.attemptEnded(id, AttemptReport(attempt: attempt,
                                                        outcome: .failed(.network("cannot start the transfer: \(error)")))))
        }
        let engineJob = self.engineJob(id)
        engineJob.transfer = transfer
        bind(transfer)
        guard announced, let job = core.jobs[id]?.job else { return }
        let live = engineJob.live(job)
        var event = TransferEvent(.attemptStarted, of: job)
        event.attempt = attempt
        event.bytesDone = live.bytesDone
        event.bytesTotal = live.bytesTotal
        feed(.launched(event))
    }

    /// The engine's side of `id`, made when it has none yet.
    func engineJob(_ id: JobID) -> EngineJob {
        if let engineJob = engine[id] { return engineJob }
        let engineJob = EngineJob()
        engine[id] = engineJob
        return engineJob
    }

    /// The engine finds the transfer of an easy handle it hands back.
    func bind(_ transfer: any Transfer, _ easy: CurlEasy? = nil) {
        transfersByEasy[ObjectIdentifier(easy ?? transfer.easy)] = transfer.jobID
    }

    private func transferEnded(_ easy: CurlEasy, _ code: CurlCode) {
        loop.assertOnLoopThread()
        if probeEnded(easy, code) || collectionMaker.ended(easy, code) || sessionDiscarder.ended(easy, code) { return }
        guard let id = transfersByEasy.removeValue(forKey: ObjectIdentifier(easy)), let transfer = engine[id]?.transfer
        else { return }
        // A resumable upload's request: the attempt goes on with the next one, or ends.
        if let session = transfer as? SessionTransfer { return sessionRequestEnded(session, easy, code) }
        guard transfer.easy === easy else { return }
        let outcome = transfer.outcome(code)
        transfer.stop()
        transfer.whenIdle { [unowned self] in
            if case .redirect(let target) = outcome, let step = transfer.redirectStep {
                return follow(id, attempt: transfer.attempt, step, to: target)
            }
            feed(.attemptEnded(id, release(transfer, outcome: outcome)))
        }
    }

    /// A redirect transferd follows itself (`RedirectGuard`): the attempt goes on at `target` in
    /// a new request, which carries the secret headers only if `target` is the job's origin.
    private func follow(_ id: JobID, attempt: Int, _ step: RedirectStep, to target: String) {
        guard core.isCurrentAttempt(id, attempt), let job = core.jobs[id]?.job, let transfer = engine[id]?.transfer else { return }
        let redirects = RedirectGuard(jobURL: job.url, tls: tlsOptions(job), secretNames: step.secretNames)
        if let refusal = redirects.refusal(of: target) {
            return feed(.attemptEnded(id, release(transfer, outcome: .failed(refusal))))
        }
        let headers = redirects.headers(step.headers, to: target)
        let dropped = headers.count < step.headers.count ? " (another origin: without the secret headers)" : ""
        logger.info("job \(id): attempt \(attempt) is redirected to \(Redaction.url(target))\(dropped)")
        engine[id]?.transfer = nil
        launchDownload(job, attempt: attempt, url: target, headers: headers, secretNames: step.secretNames,
                       redirectsLeft: step.redirectsLeft - 1,
                       deadline: step.deadline, file: step.file, resume: step.resume)
    }

    /// Takes a running transfer off the engine; `then` gets its report once its checkpoints are
    /// on disk (nil when it had no transfer yet).
    func stopTransfer(of id: JobID, then: @escaping (AttemptReport?) -> Void) {
        if preparing[id] != nil {
            logger.debug("job \(id): stops once its attempt is prepared")
            preparing[id]?.append { then(nil) }
            return
        }
        guard let transfer = engine[id]?.transfer else { return then(nil) }
        for easy in transfer.easies {
            multi.remove(easy)
            transfersByEasy[ObjectIdentifier(easy)] = nil
        }
        transfer.stop()
        transfer.whenIdle { [unowned self] in then(release(transfer, outcome: .completed)) }
    }

    /// The report of a transfer that is over; the engine forgets the transfer and keeps its file
    /// (and what it kept) for the record that follows.
    func release(_ transfer: any Transfer, outcome: AttemptOutcome) -> AttemptReport {
        if let file = transfer.partialFile { engine[transfer.jobID]?.file = file }
        if engine[transfer.jobID]?.transfer === transfer { engine[transfer.jobID]?.transfer = nil }
        return transfer.report(outcome)
    }

    private func tick() {
        loop.assertOnLoopThread()
        var received: Int64 = 0
        var sent: Int64 = 0
        var activities: [SchedulerEvent.Activity] = []
        let monotonic = Monotonic.now
        for (id, engineJob) in engine {
            guard let transfer = engineJob.transfer else { continue }
            engineJob.measureRate()
            switch transfer.direction {
            case .down: received += transfer.transferred
            case .up: sent += transfer.transferred
            }
            transfer.tick()
            let slow = engineJob.isTooSlow(configuration.speedLimit, over: configuration.speedSeconds)
            activities.append(SchedulerEvent.Activity(id: id, attempt: transfer.attempt,
                                                      idleSeconds: monotonic - transfer.lastActivity,
                                                      throttled: transfer.isThrottled, stallSeconds: transfer.stallSeconds,
                                                      tooSlow: slow ? (configuration.speedLimit, configuration.speedSeconds) : nil))
        }
        feed(.tick(activities))
        applyLimits()
        // Transfers that ended since the last tick make the sums drop: never report less than 0.
        downloadRate = max(0, received - lastTick.received)
        uploadRate = max(0, sent - lastTick.sent)
        lastTick = (received, sent)
    }

    // MARK: Getting back onto the loop

    /// Names an answer (or a reply) that comes back later.
    func nextAnswerToken() -> Int {
        lastAnswerToken += 1
        return lastAnswerToken
    }

    /// Runs `work` on the store's queue, then `then` on the loop thread.
    func stored<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T, deferrable: Bool = false,
                             then: @escaping @Sendable (Scheduler, Result<T, any Error>) -> Void) {
        loop.assertOnLoopThread()
        let inbox = inbox!
        store.async(work, deferrable: deferrable) { result in inbox.post { then($0, result) } }
    }

    /// Syncs on the file queue, records in the store, then continues on the loop thread: the order
    /// that makes a recorded length always durable.
    func durably<T: Sendable>(_ sync: @escaping @Sendable () throws -> Void,
                              record: @escaping @Sendable (JobStore) throws -> T, deferrable: Bool = false,
                              then: @escaping @Sendable (Scheduler, Result<T, any Error>) -> Void) {
        let inbox = inbox!
        let store = store
        files.async {
            do {
                try sync()
            } catch {
                return inbox.post { then($0, .failure(error)) }
            }
            store.async(record, deferrable: deferrable) { result in inbox.post { then($0, result) } }
        }
    }

    // MARK: Stopping

    /// Checkpoints every running transfer, records it as queued again, then calls `done`.
    func shutdown(_ done: @escaping () -> Void) {
        tickTimer.stop()
        retryTimer.stop()
        historyTimer?.stop()
        shutdownDone = done
        feed(.shutdown)
    }
}

extension Result {
    /// The error's text, for a log line and a refusal (nil on success).
    var failureDescription: String? {
        if case .failure(let error) = self { "\(error)" } else { nil }
    }
}
