/// A job as the store keeps it and clients see it: its `Fields`, read and changed as if they
/// were its own properties, kept in one box that copies share. The decision core, its events
/// and actions, the store's queue and the finishing groups hand jobs to each other at nearly
/// every step of a transfer, and the fields are some forty, several of them structs of their
/// own and half of them counted references: each copy retained them all, then released them
/// (twenty-five copies for each small download, `bench/instructions.sh`). A copy is now one
/// retain, and a change copies the fields only while another copy shares them. Thread: a
/// value; any.
@dynamicMemberLookup
public struct Job: Equatable, Sendable {
    public struct Fields: Equatable, Sendable {
        public var id: JobID
        public var kind: JobKind
        public var state: JobState
        /// Why the job is in its state (for example `paused by user`, `retry in 4 s`), when known.
        public var stateReason: String?
        public var url: String
        public var path: String?
        /// A download into a directory: where it goes, its name chosen from the server's answer
        /// (`ServerFileName`); `path` is nil until then.
        public var outputDirectory: String?
        public var headers: [String]
        public var sha256: String?
        public var overwrite: Bool
        /// What to do when the destination exists (`overwrite` says `.overwrite` too).
        public var onExists: OnExists = .fail
        public var priority: Priority
        public var batch: Int64?
        public var limit: Int64?
        public var maxRetries: Int
        public var bytesDone: Int64
        public var bytesTotal: Int64?
        public var attempts: Int
        public var httpStatus: Int?
        public var error: JobError?
        public var nextAttemptAt: Timestamp?
        public var createdAt: Timestamp
        public var updatedAt: Timestamp
        public var finishedAt: Timestamp?
        /// When its first attempt began (nil until one has).
        public var startedAt: Timestamp?
        /// While it transfers: bytes per second, smoothed over the last seconds, and the seconds
        /// left at that rate (nil when the size is unknown). Not stored: the engine's measure.
        public var rate: Int64?
        public var etaSeconds: Int64?
        /// Uploads: the request method and what the body is made of.
        public var method: String?
        public var upload: UploadSpec?
        public var tls = TLSOptions()
        /// How its attempts reach the server: proxy, timeouts, compression, credentials, addresses.
        public var network = NetworkOptions()
        /// A tus or S3 job: the protocol and its settings (nil: plain HTTP).
        public var remote: RemoteOptions?
        /// The manifest key that queued it, unique within its batch.
        public var key: String?
        /// Run before each attempt: its output lines (`Name: value`) are added to that attempt's
        /// request (`HeaderCommand`).
        public var headerCommand: String?
        /// Commands run when the job completes or fails (see Hooks).
        public var onComplete: String?
        public var onFail: String?
        /// The umask of the client that queued it: a download's new file and directories follow it.
        public var umask: Int?
        /// A download whose body passes this many bytes fails with `too_large` (nil: the daemon's).
        public var maxFilesize: Int64?
        /// Why it waits, while `waiting`.
        public var waitReason: WaitReason?
        /// POST uploads: the `Idempotency-Key` every attempt sends (nil when the user gave one).
        public var idempotencyKey: String?
        /// POST uploads: retry even when the server may have acted on the request (`--retry-unsafe`).
        public var retryUnsafe = false

        /// Failed at start because its stored row could not run (`InvalidJob`): it is not retried.
        public var isQuarantined: Bool { state == .failed && error?.code == InvalidJob.code }

        /// The URL with any secret replaced, for logs and events.
        public var displayURL: String { Redaction.url(url) }

        /// The headers every attempt sends: the user's, and the job's Idempotency-Key.
        public var requestHeaders: [String] {
            headers + (idempotencyKey.map { [IdempotencyKey.header($0)] } ?? [])
        }

        /// The partial file a download writes before it is complete: a hidden sibling of the
        /// destination, so the final rename never crosses filesystems.
        public var partialPath: String? {
            guard kind == .download else { return nil }
            // Named by the server: a name the job's id gives, decided before the server's is known.
            if let outputDirectory { return PartialFile.partialPath(in: outputDirectory, job: id) }
            return path.map(PartialFile.partialPath(for:))
        }

        /// What happens when the destination exists, `--overwrite` included.
        public var existing: OnExists { overwrite ? .overwrite : onExists }
    }

    private var box: Box

    public init(_ fields: Fields) {
        box = Box(fields)
    }

    /// The fields themselves; a change copies them first if another job shares them.
    public var fields: Fields {
        _read { yield box.fields }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
            yield &box.fields
        }
    }

    public subscript<Value>(dynamicMember field: KeyPath<Fields, Value>) -> Value {
        box.fields[keyPath: field]
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<Fields, Value>) -> Value {
        get { box.fields[keyPath: field] }
        _modify { yield &fields[keyPath: field] }
    }

    public static func == (lhs: Job, rhs: Job) -> Bool {
        lhs.box === rhs.box || lhs.box.fields == rhs.box.fields
    }

    /// Changed only through `fields`, and only while no other job holds it.
    private final class Box: @unchecked Sendable {
        var fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }
}

/// What a client asks the daemon to queue.
public struct NewJob: Codable, Equatable, Sendable {
    public var kind: JobKind
    public var url: String
    public var path: String?
    /// A download into this directory, named by the server (instead of `path`).
    public var outputDirectory: String?
    public var headers: [String]
    public var sha256: String?
    public var overwrite: Bool
    /// nil: `fail`, or `overwrite` when `overwrite` is set.
    public var onExists: OnExists?
    public var priority: Priority
    public var batch: Int64?
    public var limit: Int64?
    public var retries: Int?
    public var paused: Bool
    /// Continue from exported resume data instead of starting at byte 0.
    public var resumeData: ResumeData?
    /// Uploads: `POST` or `PUT` (default POST for a form, PUT for a raw file in `path`).
    public var method: String?
    /// Uploads: the multipart form; nil for a raw-body upload of `path`.
    public var form: [FormField]?
    public var tls: TLSOptions?
    /// Proxy, timeouts, compression, credentials, IP version, addresses (nil: the defaults).
    public var network: NetworkOptions?
    /// tus or S3 (nil: plain HTTP; an `s3://` URL means S3 with the defaults).
    public var remote: RemoteOptions?
    public var onComplete: String?
    public var onFail: String?
    /// Run before each attempt; its output lines are added to the request (`HeaderCommand`).
    public var headerCommand: String?
    /// The client's umask (a download's new file and directories follow it; 0o022 if absent).
    public var umask: Int?
    /// Downloads: fail with `too_large` past this many bytes (nil: the daemon's `--max-filesize`).
    public var maxFilesize: Int64?
    /// Uploads: retry a POST even when the server may have acted on it (absent: false).
    public var retryUnsafe: Bool?

    public init(kind: JobKind, url: String, path: String?, headers: [String] = [], sha256: String? = nil,
                overwrite: Bool = false, priority: Priority = .normal, batch: Int64? = nil,
                limit: Int64? = nil, retries: Int? = nil, paused: Bool = false, resumeData: ResumeData? = nil,
                method: String? = nil, form: [FormField]? = nil, tls: TLSOptions? = nil,
                network: NetworkOptions? = nil, onComplete: String? = nil, onFail: String? = nil,
                retryUnsafe: Bool? = nil, headerCommand: String? = nil) {
        self.kind = kind
        self.url = url
        self.path = path
        self.headers = headers
        self.sha256 = sha256
        self.overwrite = overwrite
        self.priority = priority
        self.batch = batch
        self.limit = limit
        self.retries = retries
        self.paused = paused
        self.resumeData = resumeData
        self.method = method
        self.form = form
        self.tls = tls
        self.network = network
        self.onComplete = onComplete
        self.onFail = onFail
        self.retryUnsafe = retryUnsafe
        self.headerCommand = headerCommand
    }
}

extension NewJob {
    /// Every number of the job within `NumericLimits` (named as in the protocol; a `limit` of 0
    /// means unlimited).
    public func checkNumbers() throws(OutOfRange) {
        if let batch { _ = try NumericLimits.id.check(batch, "batch") }
        if let limit, limit != 0 { _ = try NumericLimits.rate.check(limit, "limit") }
        if let retries { _ = try NumericLimits.retries.check(retries, "retries") }
        if let umask { _ = try NumericLimits.umask.check(umask, "umask") }
        if let maxFilesize { _ = try NumericLimits.bytes.check(maxFilesize, "maxFilesize") }
        try resumeData?.checkNumbers()
    }
}
