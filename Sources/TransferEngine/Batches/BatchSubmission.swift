/// One request of `batch submit` (or `backup`): a chunk of manifest entries. A manifest is sent
/// in chunks under one token on one connection; the daemon keeps them until the `final` one and
/// then queues all of it in one transaction, or none of it.
public struct BatchSubmission: Codable, Equatable, Sendable {
    /// Chosen by the client; chunks with the same token on the same connection belong together.
    public var token: String
    public var final: Bool
    /// Add to this existing batch (its keys are not queued again).
    public var batch: Int64?
    /// The new batch's name; with `reuse`, the newest batch of that name is used when there is one.
    public var name: String?
    public var reuse: Bool
    public var onComplete: String?
    public var onFail: String?
    public var backup: BackupTarget?
    /// `backup --checksum`: a file is unchanged when its sha256 is, whatever its mtime.
    public var checksum: Bool
    /// The client's umask, for the jobs' new files (as `NewJob.umask`).
    public var umask: Int?
    public var entries: [ManifestEntry]

    public init(token: String, final: Bool, batch: Int64? = nil, name: String? = nil, reuse: Bool = false,
                onComplete: String? = nil, onFail: String? = nil, backup: BackupTarget? = nil, checksum: Bool = false,
                entries: [ManifestEntry]) {
        self.token = token
        self.final = final
        self.batch = batch
        self.name = name
        self.reuse = reuse
        self.onComplete = onComplete
        self.onFail = onFail
        self.backup = backup
        self.checksum = checksum
        self.entries = entries
    }

    private enum CodingKeys: String, CodingKey {
        case token, final, batch, name, reuse, onComplete, onFail, backup, checksum, umask, entries
    }

    /// As synthesized, but a chunk's entries are read from `JSONTreeDecoder`'s tree by hand
    /// (`ManifestEntry.init(tree:state:)`): through `Decodable` they were most of a submit's time
    /// on the loop thread.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decode(String.self, forKey: .token)
        final = try container.decode(Bool.self, forKey: .final)
        batch = try container.decodeIfPresent(Int64.self, forKey: .batch)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        reuse = try container.decode(Bool.self, forKey: .reuse)
        onComplete = try container.decodeIfPresent(String.self, forKey: .onComplete)
        onFail = try container.decodeIfPresent(String.self, forKey: .onFail)
        backup = try container.decodeIfPresent(BackupTarget.self, forKey: .backup)
        checksum = try container.decode(Bool.self, forKey: .checksum)
        umask = try container.decodeIfPresent(Int.self, forKey: .umask)
        if let tree = decoder as? JSONTreeValueDecoder {
            let fields = try JSONTreeFields(tree.tree, tree.state)
            let member = try fields.required(fields.members.first { $0.key == CodingKeys.entries.stringValue }?.value)
            guard case .array(let elements) = member else { throw fields.unsupported() }
            entries = try elements.map { try ManifestEntry(tree: $0, state: tree.state) }
        } else {
            entries = try container.decode([ManifestEntry].self, forKey: .entries)
        }
    }
}

/// One job of a manifest, with the line it came from (for error messages).
public struct ManifestEntry: Codable, Equatable, Sendable {
    public var line: Int
    /// Idempotency key: a key already in the batch is not queued again.
    public var key: String?
    public var job: NewJob
    /// Backups: the file's path under the directory, and its sha256 with `--checksum`.
    public var relativePath: String?
    public var sha256: String?

    public init(line: Int, key: String? = nil, job: NewJob, relativePath: String? = nil, sha256: String? = nil) {
        self.line = line
        self.key = key
        self.job = job
        self.relativePath = relativePath
        self.sha256 = sha256
    }

    /// Every member `Decodable` reads, one per stored property (a unit test counts them).
    static let treeKeys = Set(CodingKeys.allCases.map(\.stringValue))

    /// The entry `Decodable` would give, read from the tree by hand (`JSONTreeFields`).
    init(tree: JSONTree, state: JSONTreeState) throws {
        let fields = try JSONTreeFields(tree, state)
        var line: Int?, job: NewJob?, key: String?, relativePath: String?, sha256: String?
        for (name, value) in fields.members {
            switch name {
            case "line": line = try fields.integer(value)
            case "key": key = try fields.optional(value, fields.string)
            case "job": job = try NewJob(tree: value, state: state)
            case "relativePath": relativePath = try fields.optional(value, fields.string)
            case "sha256": sha256 = try fields.optional(value, fields.string)
            default: continue
            }
        }
        self.init(line: try fields.required(line), key: key, job: try fields.required(job), relativePath: relativePath,
                  sha256: sha256)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case line, key, job, relativePath, sha256 }

    /// As synthesized; into a `JSONStreamEncoder`'s stream the job is written by hand
    /// (`NewJob.write(to:)`).
    public func encode(to encoder: any Encoder) throws {
        guard let stream = (encoder as? StreamEncoder)?.stream else {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(line, forKey: .line)
            try container.encodeIfPresent(key, forKey: .key)
            try container.encode(job, forKey: .job)
            try container.encodeIfPresent(relativePath, forKey: .relativePath)
            try container.encodeIfPresent(sha256, forKey: .sha256)
            return
        }
        let depth = stream.depth
        let object = stream.openContainer(UInt8(ascii: "{"), UInt8(ascii: "}"))
        stream.member(CodingKeys.line.stringValue, of: object)
        stream.integer(line)
        if let key {
            stream.member(CodingKeys.key.stringValue, of: object)
            stream.string(key)
        }
        stream.member(CodingKeys.job.stringValue, of: object)
        try job.write(to: stream)
        if let relativePath {
            stream.member(CodingKeys.relativePath.stringValue, of: object)
            stream.string(relativePath)
        }
        if let sha256 {
            stream.member(CodingKeys.sha256.stringValue, of: object)
            stream.string(sha256)
        }
        stream.close(downTo: depth)
    }

    /// The entry's job as a manifest queues it: with the client's `umask` unless it has its own.
    func job(umask: Int?) -> NewJob {
        var new = job
        new.umask = new.umask ?? umask
        return new
    }
}

/// What a submission did.
public struct SubmissionResult: Codable, Equatable, Sendable {
    public var batch: Int64
    public var name: String
    /// Jobs queued now.
    public var jobs: Int
    /// Lines not queued: their key is already in the batch, or (backups) the file is unchanged.
    public var skipped: Int

    public init(batch: Int64, name: String, jobs: Int, skipped: Int) {
        self.batch = batch
        self.name = name
        self.jobs = jobs
        self.skipped = skipped
    }
}
