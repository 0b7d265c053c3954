/// The entity validators a resumed request must match (sent as If-Range).
public struct Validators: Codable, Equatable, Sendable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// A strong ETag, else Last-Modified; nil when the server gave neither (resume is unsafe).
    public var ifRange: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
}

/// What the store keeps to continue a download: how many bytes of `partialPath` are durable,
/// and which entity they belong to.
public struct ResumeState: Equatable, Sendable {
    public var partialPath: String
    public var bytesDurable: Int64
    public var validators: Validators
    public var bytesTotal: Int64?
    /// The partial file is complete, synced and verified; only the rename into place is left.
    public var finalizing: Bool
    /// The partial file as transferd last left it; nil when not known (older records, imports).
    public var file: FileIdentity?
    /// `file` was taken while an attempt could still write after it (a checkpoint): after a
    /// crash the file may have grown and changed since, by transferd's own hand.
    public var fileWriting: Bool
    /// The bytes were decoded by libcurl from a compressed response (`--compressed` and a
    /// `Content-Encoding`): the server's offsets count encoded bytes, so these are never
    /// continued by a range; the next attempt starts over at byte 0.
    public var decoded: Bool

    public init(partialPath: String, bytesDurable: Int64 = 0, validators: Validators = Validators(),
                bytesTotal: Int64? = nil, finalizing: Bool = false, file: FileIdentity? = nil,
                fileWriting: Bool = false, decoded: Bool = false) {
        self.partialPath = partialPath
        self.bytesDurable = bytesDurable
        self.validators = validators
        self.bytesTotal = bytesTotal
        self.finalizing = finalizing
        self.file = file
        self.fileWriting = fileWriting
        self.decoded = decoded
    }

    /// This state with `file`'s identity as it is now (call after its bytes are synced).
    func identified(by file: PartialFile, writing: Bool) -> ResumeState {
        identified(as: file.identity, writing: writing)
    }

    /// The state tied to the partial file as `identity` tells it.
    func identified(as identity: FileIdentity?, writing: Bool) -> ResumeState {
        var state = self
        state.file = identity
        state.fileWriting = writing
        return state
    }

    /// Something is at `path`, and it is the file this state identifies when it knows one (a
    /// `finalizing` mark does; older records do not), as it was left: its whole identity — inode,
    /// size and modification time, none of which a rename changes — not another file put in its
    /// place (which may even get the freed inode's number).
    func isMarkedFile(at path: String) -> Bool {
        guard let current = FileIdentity(at: path) else { return false }
        return file.map { $0 == current } ?? true
    }

    /// Why the recorded bytes cannot be continued in the partial file as it is now (`current`),
    /// or nil when they can. Bytes are trusted only in the file transferd wrote, as it left it:
    /// after a clean stop, the same size and modification time; after a crash mid-write, the
    /// same inode at least as long as the recorded length. Pure.
    public func reasonToStartOver(current: FileIdentity) -> StartOverReason? {
        guard bytesDurable > 0 else { return nil }
        guard !decoded else { return .decoded }
        guard validators.ifRange != nil else { return .noValidator }
        if let file, !file.isSameFile(as: current) { return .replaced }
        guard current.size >= bytesDurable else { return .shortened }
        if let file, !fileWriting, file.size != current.size || file.modifiedNanoseconds != current.modifiedNanoseconds {
            return .changed
        }
        return nil
    }
}

/// Why an attempt started from byte 0 although the job had bytes. The raw value is stored with
/// the attempt and shown by `show` (never renamed).
public enum StartOverReason: String, Codable, Equatable, Sendable {
    case noValidator = "no_validator"
    case replaced = "partial_file_replaced"
    case shortened = "partial_file_shortened"
    case changed = "partial_file_changed"
    case foreign = "partial_file_foreign"
    case decoded = "content_decoded"

    public var message: String {
        switch self {
        case .noValidator:
            "the server gave no ETag or Last-Modified to resume against (without one, every interrupted "
                + "download from it starts again from byte 0: a resume could mix two versions)"
        case .replaced: "the partial file was deleted or replaced while the job was not running"
        case .shortened: "the partial file is shorter than the bytes recorded"
        case .changed: "the partial file was changed by another program while the job was not running"
        case .foreign: "the partial file belonged to another user or had other links; it was replaced"
        case .decoded:
            "the server sent the file compressed (--compressed): decoded bytes cannot be continued by a range"
        }
    }
}

/// The exported, versioned resume-data document (docs/resume-data.md). Only ever extended.
public struct ResumeData: Codable, Equatable, Sendable {
    public static let currentVersion = 1

    public var version: Int
    public var url: String
    public var path: String
    public var partialPath: String
    public var bytesReceived: Int64
    public var etag: String?
    public var lastModified: String?
    public var bytesTotal: Int64?
    public var headers: [String]

    public init(job: Job, state: ResumeState) {
        version = Self.currentVersion
        url = Redaction.url(job.url)
        path = job.path ?? ""
        partialPath = state.partialPath
        // Decoded bytes cannot be continued by a range (`ResumeState.decoded`): none to continue.
        bytesReceived = state.decoded ? 0 : state.bytesDurable
        etag = state.validators.etag
        lastModified = state.validators.lastModified
        bytesTotal = state.bytesTotal
        headers = Redaction.withoutSecrets(job.headers)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        url = try container.decode(String.self, forKey: .url)
        path = try container.decode(String.self, forKey: .path)
        partialPath = try container.decode(String.self, forKey: .partialPath)
        bytesReceived = try container.decode(Int64.self, forKey: .bytesReceived)
        etag = try container.decodeIfPresent(String.self, forKey: .etag)
        lastModified = try container.decodeIfPresent(String.self, forKey: .lastModified)
        bytesTotal = try container.decodeIfPresent(Int64.self, forKey: .bytesTotal)
        headers = try container.decodeIfPresent([String].self, forKey: .headers) ?? []
    }

    /// Every key is written, `null` included, so the document's shape is stable.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(url, forKey: .url)
        try container.encode(path, forKey: .path)
        try container.encode(partialPath, forKey: .partialPath)
        try container.encode(bytesReceived, forKey: .bytesReceived)
        try container.encode(etag, forKey: .etag)
        try container.encode(lastModified, forKey: .lastModified)
        try container.encode(bytesTotal, forKey: .bytesTotal)
        try container.encode(headers, forKey: .headers)
    }

    private enum CodingKeys: String, CodingKey {
        case version, url, path, partialPath, bytesReceived, etag, lastModified, bytesTotal, headers
    }

    /// The byte counts within `NumericLimits.bytes`, and no more received than the total.
    public func checkNumbers() throws(OutOfRange) {
        let received = try NumericLimits.bytes.check(bytesReceived, "bytesReceived")
        guard let total = bytesTotal else { return }
        _ = try NumericLimits.bytes.check(total, "bytesTotal")
        guard received <= total else {
            throw OutOfRange(field: "bytesReceived", value: String(received), limit: "from 0 to bytesTotal (\(total))")
        }
    }
}
