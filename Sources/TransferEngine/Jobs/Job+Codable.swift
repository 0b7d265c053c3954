/// The job JSON of SPEC.md: camelCase keys, every key present (null when unknown).
extension Job: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, kind, state, stateReason, url, path, partialPath, headers, sha256, overwrite, bytesDone,
             bytesTotal, attempts, maxRetries, httpStatus, error, priority, batch, limit, nextAttemptAt,
             createdAt, updatedAt, finishedAt, method, form, upload, tls, key, onComplete, onFail
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(state, forKey: .state)
        try container.encode(stateReason, forKey: .stateReason)
        try container.encode(HeaderRedaction.url(url), forKey: .url)
        try container.encode(path, forKey: .path)
        try container.encode(partialPath, forKey: .partialPath)
        try container.encode(HeaderRedaction.redact(headers), forKey: .headers)
        try container.encode(sha256, forKey: .sha256)
        try container.encode(overwrite, forKey: .overwrite)
        try container.encode(bytesDone, forKey: .bytesDone)
        try container.encode(bytesTotal, forKey: .bytesTotal)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(maxRetries, forKey: .maxRetries)
        try container.encode(httpStatus, forKey: .httpStatus)
        try container.encode(error, forKey: .error)
        try container.encode(priority, forKey: .priority)
        try container.encode(batch, forKey: .batch)
        try container.encode(limit, forKey: .limit)
        try container.encode(nextAttemptAt, forKey: .nextAttemptAt)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(finishedAt, forKey: .finishedAt)
        try container.encode(method, forKey: .method)
        try container.encode(upload?.form, forKey: .form)
        try container.encode(upload, forKey: .upload)
        try container.encode(tls, forKey: .tls)
        try container.encode(key, forKey: .key)
        try container.encode(onComplete, forKey: .onComplete)
        try container.encode(onFail, forKey: .onFail)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(JobID.self, forKey: .id)
        kind = try container.decode(JobKind.self, forKey: .kind)
        state = try container.decode(JobState.self, forKey: .state)
        stateReason = try container.decodeIfPresent(String.self, forKey: .stateReason)
        url = try container.decode(String.self, forKey: .url)
        path = try container.decodeIfPresent(String.self, forKey: .path)
        headers = try container.decodeIfPresent([String].self, forKey: .headers) ?? []
        sha256 = try container.decodeIfPresent(String.self, forKey: .sha256)
        overwrite = try container.decodeIfPresent(Bool.self, forKey: .overwrite) ?? false
        bytesDone = try container.decode(Int64.self, forKey: .bytesDone)
        bytesTotal = try container.decodeIfPresent(Int64.self, forKey: .bytesTotal)
        attempts = try container.decode(Int.self, forKey: .attempts)
        maxRetries = try container.decodeIfPresent(Int.self, forKey: .maxRetries) ?? 0
        httpStatus = try container.decodeIfPresent(Int.self, forKey: .httpStatus)
        error = try container.decodeIfPresent(JobError.self, forKey: .error)
        priority = try container.decodeIfPresent(Priority.self, forKey: .priority) ?? .normal
        batch = try container.decodeIfPresent(Int64.self, forKey: .batch)
        limit = try container.decodeIfPresent(Int64.self, forKey: .limit)
        nextAttemptAt = try container.decodeIfPresent(Timestamp.self, forKey: .nextAttemptAt)
        createdAt = try container.decode(Timestamp.self, forKey: .createdAt)
        updatedAt = try container.decode(Timestamp.self, forKey: .updatedAt)
        finishedAt = try container.decodeIfPresent(Timestamp.self, forKey: .finishedAt)
        method = try container.decodeIfPresent(String.self, forKey: .method)
        upload = try container.decodeIfPresent(UploadSpec.self, forKey: .upload)
        tls = try container.decodeIfPresent(TLSOptions.self, forKey: .tls) ?? TLSOptions()
        key = try container.decodeIfPresent(String.self, forKey: .key)
        onComplete = try container.decodeIfPresent(String.self, forKey: .onComplete)
        onFail = try container.decodeIfPresent(String.self, forKey: .onFail)
    }
}

/// Secrets never leave the daemon: these header values, and passwords in URLs, print as
/// `<redacted>`; nor do they follow a redirect to another origin (`RedirectGuard`).
public enum HeaderRedaction {
    public static let secretNames: Set<String> = [
        "authorization", "cookie", "proxy-authorization", "x-api-key", "api-key", "x-auth-token",
    ]

    public static func isSecret(_ header: String) -> Bool {
        guard let colon = header.firstIndex(of: ":") else { return false }
        return secretNames.contains(header[..<colon].lowercased())
    }

    /// The headers that may leave the daemon as they are (resume-data exports).
    public static func withoutSecrets(_ headers: [String]) -> [String] {
        headers.filter { !isSecret($0) }
    }

    /// `https://user:secret@host/` → `https://user:<redacted>@host/`.
    public static func url(_ url: String) -> String {
        guard let scheme = url.firstRange(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return url }
        let prefix = String(url[..<scheme.upperBound])
        let user = String(authority[..<colon])
        return prefix + user + ":<redacted>" + String(rest[at...])
    }

    public static func redact(_ headers: [String]) -> [String] {
        headers.map { header in
            guard let colon = header.firstIndex(of: ":") else { return header }
            let name = header[..<colon]
            return secretNames.contains(name.lowercased()) ? "\(name): <redacted>" : header
        }
    }
}
