/// URLSessionTaskMetrics' counterpart: libcurl's timings of one attempt, in milliseconds from
/// its start, and where it went.
public struct AttemptMetrics: Codable, Equatable, Sendable {
    public var nameLookupMs: Double
    public var connectMs: Double
    /// TLS handshake done (0 for plain http).
    public var tlsMs: Double
    public var firstByteMs: Double
    public var totalMs: Double
    /// `1.1`, `2`, `3`, or nil before a response.
    public var httpVersion: String?
    public var remoteAddress: String?
    /// Average bytes per second over the attempt (received or sent).
    public var bytesPerSecond: Int64

    public init(nameLookupMs: Double, connectMs: Double, tlsMs: Double, firstByteMs: Double, totalMs: Double,
                httpVersion: String?, remoteAddress: String?, bytesPerSecond: Int64) {
        self.nameLookupMs = nameLookupMs
        self.connectMs = connectMs
        self.tlsMs = tlsMs
        self.firstByteMs = firstByteMs
        self.totalMs = totalMs
        self.httpVersion = httpVersion
        self.remoteAddress = remoteAddress
        self.bytesPerSecond = bytesPerSecond
    }
}
