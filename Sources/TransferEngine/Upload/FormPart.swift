/// One part of a multipart/form-data body, as persisted with the job.
public enum FormPart: Equatable, Sendable {
    case field(name: String, value: String)
    case file(name: String, source: SourceFile, filename: String, contentType: String)

    public var name: String {
        switch self {
        case .field(let name, _), .file(let name, _, _, _): name
        }
    }
}

extension FormPart: Codable {
    private enum CodingKeys: String, CodingKey { case name, value, file, filename, contentType, size, modified, device, inode, refusesLinks }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .name)
        if let path = try container.decodeIfPresent(String.self, forKey: .file) {
            let source = SourceFile(path: path, size: try container.decode(Int64.self, forKey: .size),
                                    modified: try SourceFile.decodeModified(container, .modified),
                                    device: try container.decodeIfPresent(UInt64.self, forKey: .device),
                                    inode: try container.decodeIfPresent(UInt64.self, forKey: .inode),
                                    refusesLinks: try container.decodeIfPresent(Bool.self, forKey: .refusesLinks) ?? false)
            self = .file(name: name, source: source,
                         filename: try container.decode(String.self, forKey: .filename),
                         contentType: try container.decode(String.self, forKey: .contentType))
        } else {
            self = .field(name: name, value: try container.decode(String.self, forKey: .value))
        }
    }

    /// SPEC.md's `form` element: `{name, value}` or `{name, file, filename, contentType, size}`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .field(let name, let value):
            try container.encode(name, forKey: .name)
            try container.encode(value, forKey: .value)
        case .file(let name, let source, let filename, let contentType):
            try container.encode(name, forKey: .name)
            try container.encode(source.path, forKey: .file)
            try container.encode(filename, forKey: .filename)
            try container.encode(contentType, forKey: .contentType)
            try container.encode(source.size, forKey: .size)
            try container.encode(FileTime.iso8601(nanoseconds: source.modified), forKey: .modified)
            try source.encodeIdentity(into: &container)
        }
    }
}

/// What an upload sends, fixed when the job is queued: a multipart form with its boundary, or
/// one file as the raw body. Persisted as JSON with the job.
public struct UploadSpec: Codable, Equatable, Sendable {
    public var boundary: String?
    public var form: [FormPart]?
    public var raw: SourceFile?

    public init(boundary: String? = nil, form: [FormPart]? = nil, raw: SourceFile? = nil) {
        self.boundary = boundary
        self.form = form
        self.raw = raw
    }

    /// Every file the upload reads.
    public var sources: [SourceFile] {
        if let raw { return [raw] }
        return (form ?? []).compactMap { part in
            if case .file(_, let source, _, _) = part { return source }
            return nil
        }
    }
}
