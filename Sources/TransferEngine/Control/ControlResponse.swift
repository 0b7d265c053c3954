/// The daemon's answer to one request: a JSON object on one line.
public struct ControlResponse: Codable, Equatable, Sendable {
    public var version: Int
    /// The request's `id`, when it had one.
    public var id: Int?
    public var ok: Bool
    public var error: ControlError?
    /// `list`, and the jobs a command acted on or waited for.
    public var jobs: [Job]?
    /// `wait` with `brief`: how each job ended (with `ranges`: each job that did not complete).
    public var outcomes: [JobOutcome]?
    /// `wait` with `brief` and `ranges`: the ids of the jobs that completed.
    public var completed: [JobIDRange]?
    /// `pause`, `resume`: the jobs already in the state asked for (a paused job paused, a queued
    /// or running one resumed), left as they were.
    public var unchanged: [Job]?
    /// `add`, `show`.
    public var job: Job?
    /// `show`: every attempt of the job.
    public var attempts: [AttemptRecord]?
    public var resumeData: ResumeData?
    public var stats: DaemonStats?
    /// `show` of an upload: what the server answered, once it did.
    public var response: UploadResponse?
    /// `events`: the most recent events; with `follow`, each later line carries one `event`.
    public var events: [TransferEvent]?
    public var event: TransferEvent?
    /// `batch-list`; `batch-show` (one).
    public var batches: [Batch]?
    /// `submit`: the final chunk's outcome; earlier chunks answer with `staged`, the entries held so far.
    public var submitted: SubmissionResult?
    public var staged: Int?
    /// `backup-plan`: one decision per entry, in their order.
    public var plan: [BackupDecision]?
    /// `show` of a resumable upload: what its server knows it by (the URL redacted), and what
    /// the server made of its settings (a smaller tus chunk, no termination).
    public var uploadSession: UploadSession?
    /// `show`, `batch-show`: the completion hooks that ran.
    public var hookRuns: [HookRun]?
    /// `prune`: how many jobs were deleted.
    public var pruned: Int?

    public init(ok: Bool = true, error: ControlError? = nil, jobs: [Job]? = nil, job: Job? = nil,
                attempts: [AttemptRecord]? = nil, resumeData: ResumeData? = nil, stats: DaemonStats? = nil,
                response: UploadResponse? = nil, events: [TransferEvent]? = nil, event: TransferEvent? = nil,
                batches: [Batch]? = nil, submitted: SubmissionResult? = nil, staged: Int? = nil,
                hookRuns: [HookRun]? = nil, plan: [BackupDecision]? = nil) {
        version = ControlRequest.protocolVersion
        self.ok = ok
        self.error = error
        self.jobs = jobs
        self.job = job
        self.attempts = attempts
        self.resumeData = resumeData
        self.stats = stats
        self.response = response
        self.events = events
        self.event = event
        self.batches = batches
        self.submitted = submitted
        self.staged = staged
        self.hookRuns = hookRuns
        self.plan = plan
    }

    public static func failure(_ error: ControlError) -> ControlResponse {
        ControlResponse(ok: false, error: error)
    }
}

/// Why a request was refused. `code` is a stable word; `message` one actionable line.
public struct ControlError: Error, Codable, Equatable, Sendable {
    public enum Code: String, Codable, Sendable {
        /// The line is not a request (bad JSON, missing fields).
        case badRequest = "bad_request"
        /// A value in the request is invalid (URL, path, option).
        case invalidArgument = "invalid_argument"
        case unknownJob = "unknown_job"
        case unknownBatch = "unknown_batch"
        /// The job's state does not allow what was asked.
        case illegalTransition = "illegal_transition"
        /// Another unfinished job already downloads to that destination.
        case destinationTaken = "destination_taken"
        case tooLarge = "too_large"
        case unsupportedVersion = "unsupported_version"
        case forbidden
        case `internal`
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension ControlError {
    /// The control protocol's words for why a job was not queued (the core's typed reason).
    init(_ refusal: JobRefusal) {
        self.init(Self.code(for: refusal), refusal.message)
    }

    private static func code(for refusal: JobRefusal) -> Code {
        switch refusal {
        case .invalid, .destination(.stateDirectory): .invalidArgument
        case .destination(.taken): .destinationTaken
        case .unknownBatch: .unknownBatch
        case .tooLarge: .tooLarge
        case .at(_, let reason): code(for: reason)
        }
    }

    /// The control protocol's words for why a command on jobs was not done.
    init(_ refusal: CommandRefusal) {
        self.init(Self.code(for: refusal), refusal.message)
    }

    /// As `init(_:)`; a store failure also says what could not be done (`doing`).
    init(_ refusal: CommandRefusal, doing: String) {
        if case .store(let error) = refusal {
            self.init(.internal, "\(doing): \(error)")
        } else {
            self.init(refusal)
        }
    }

    private static func code(for refusal: CommandRefusal) -> Code {
        switch refusal {
        case .unknownJob: .unknownJob
        case .unknownBatch: .unknownBatch
        case .notAllowed, .notLimitable, .notModifiable, .quarantined, .noResumeData, .unchanged: .illegalTransition
        case .notRecorded, .notClaimed, .store: .internal
        case .destination(let refusal): code(for: JobRefusal.destination(refusal))
        case .refused(let refusal): code(for: refusal)
        }
    }
}

/// `stats`: what the daemon is and does right now.
public struct DaemonStats: Codable, Equatable, Sendable {
    public var version: String
    public var pid: Int32
    public var stateDirectory: String
    /// Jobs by state; every state is present.
    public var jobs: [String: Int]
    public var maxActive: Int
    /// Transfers to one host at once (`--max-per-host`); absent from daemons before batches.
    public var maxPerHost: Int?
    public var rates: Rates
    /// The limits in force now (the timetable's active entry applied).
    public var limits: Rates
    /// The limits set by options or `limit --down/--up`, used when no timetable entry applies.
    public var configuredLimits: Rates?
    /// The timetable, and the entry in force now.
    public var schedule: String?
    public var scheduleEntry: String?

    /// Bytes per second, down and up (null: unlimited, for limits).
    public struct Rates: Codable, Equatable, Sendable {
        public var down: Int64?
        public var up: Int64?

        public init(down: Int64?, up: Int64?) {
            self.down = down
            self.up = up
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(down, forKey: .down)
            try container.encode(up, forKey: .up)
        }

        private enum CodingKeys: String, CodingKey { case down, up }
    }

    public init(version: String, pid: Int32, stateDirectory: String, jobs: [String: Int], maxActive: Int,
                rates: Rates, limits: Rates, configuredLimits: Rates? = nil, schedule: String? = nil,
                scheduleEntry: String? = nil, maxPerHost: Int? = nil) {
        self.version = version
        self.maxPerHost = maxPerHost
        self.pid = pid
        self.stateDirectory = stateDirectory
        self.jobs = jobs
        self.maxActive = maxActive
        self.rates = rates
        self.limits = limits
        self.configuredLimits = configuredLimits
        self.schedule = schedule
        self.scheduleEntry = scheduleEntry
    }
}
