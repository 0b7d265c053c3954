/// What `modify` changes in a job that has not finished (queued, paused, waiting or failed):
/// each field nil leaves it as it is. Wire form of the `modify` request's `changes`.
public struct JobChanges: Codable, Equatable, Sendable {
    /// A new URL (a presigned URL that expired, a mirror): checked as a new job's.
    public var url: String?
    /// Headers to set: each replaces the job's headers of the same name.
    public var headers: [String]?
    /// Names of headers to remove (case-insensitive).
    public var removeHeaders: [String]?
    /// Bytes per second; 0: unlimited.
    public var limit: Int64?
    public var priority: Priority?
    /// Retries after a failed attempt, counted from now.
    public var retries: Int?

    public init(url: String? = nil, headers: [String]? = nil, removeHeaders: [String]? = nil, limit: Int64? = nil,
                priority: Priority? = nil, retries: Int? = nil) {
        self.url = url
        self.headers = headers
        self.removeHeaders = removeHeaders
        self.limit = limit
        self.priority = priority
        self.retries = retries
    }

    public var isEmpty: Bool { self == JobChanges() }

    /// The states a job may be modified in: not while an attempt runs, not once it ended for good.
    static func allows(_ state: JobState) -> Bool {
        state == .queued || state == .paused || state == .waiting || state == .failed
    }

    /// `job` with the changes made; throws a refusal for a value a new job would be refused.
    func applied(to job: Job) throws(JobRefusal) -> Job {
        var changed = job
        if let url {
            try JobValidation.validateURL(url)
            changed.url = url
        }
        let removed = Set((removeHeaders ?? []).map { $0.lowercased() } + (headers ?? []).map(Self.name))
        if !removed.isEmpty || headers != nil {
            changed.headers = job.headers.filter { !removed.contains(Self.name($0)) } + (headers ?? [])
        }
        for header in headers ?? [] where !header.contains(":") || header.utf8.contains(where: { $0 == 10 || $0 == 13 }) {
            throw JobRefusal.invalid("a header must look like 'Name: value', got '\(header)'")
        }
        if let limit {
            if limit != 0 {
                do { _ = try NumericLimits.rate.check(limit, "limit") } catch { throw JobRefusal.invalid(error.message) }
            }
            changed.limit = limit == 0 ? nil : limit
        }
        if let priority { changed.priority = priority }
        if let retries {
            do { _ = try NumericLimits.retries.check(retries, "retries") } catch { throw JobRefusal.invalid(error.message) }
            changed.maxRetries = retries
        }
        return changed
    }

    /// The fields it changes, for the log and the event: `url, headers, limit`.
    var summary: String {
        [url.map { _ in "url" }, (headers != nil || removeHeaders != nil) ? "headers" : nil, limit.map { _ in "limit" },
         priority.map { "priority \($0.rawValue)" }, retries.map { "retries \($0)" }].compactMap { $0 }.joined(separator: ", ")
    }

    /// A header line's name, as compared: without spaces around it, lowercased.
    private static func name(_ header: String) -> String {
        var name = header.prefix { $0 != ":" }
        while name.first == " " { name.removeFirst() }
        while name.last == " " { name.removeLast() }
        return name.lowercased()
    }
}
