/// One HTTP attempt of a job, as stored.
public struct AttemptRecord: Codable, Equatable, Sendable {
    public var number: Int
    public var startedAt: Timestamp
    public var endedAt: Timestamp?
    /// The byte offset the attempt asked for (0 when it asked for the whole entity).
    public var rangeStart: Int64
    public var httpStatus: Int?
    public var error: JobError?
    /// Bytes received in this attempt.
    public var bytes: Int64
    /// libcurl's timings, once the attempt has ended (nil for one a stopped daemon left open).
    public var metrics: AttemptMetrics?
    /// Why the attempt started from byte 0 although the job had bytes.
    public var startedOver: StartOverReason?
    /// Why this failed attempt was not tried again; nil when it was, or did not fail.
    public var notRetried: RetryRefusal?

    public init(number: Int, startedAt: Timestamp, endedAt: Timestamp? = nil, rangeStart: Int64,
                httpStatus: Int? = nil, error: JobError? = nil, bytes: Int64 = 0, metrics: AttemptMetrics? = nil,
                startedOver: StartOverReason? = nil) {
        self.number = number
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.rangeStart = rangeStart
        self.httpStatus = httpStatus
        self.error = error
        self.bytes = bytes
        self.metrics = metrics
        self.startedOver = startedOver
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(number, forKey: .number)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(endedAt, forKey: .endedAt)
        try container.encode(rangeStart, forKey: .rangeStart)
        try container.encode(httpStatus, forKey: .httpStatus)
        try container.encode(error, forKey: .error)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(metrics, forKey: .metrics)
        try container.encode(notRetried, forKey: .notRetried)
        try container.encodeIfPresent(startedOver, forKey: .startedOver)
    }

    private enum CodingKeys: String, CodingKey {
        case number, startedAt, endedAt, rangeStart, httpStatus, error, bytes, metrics, notRetried, startedOver
    }
}
