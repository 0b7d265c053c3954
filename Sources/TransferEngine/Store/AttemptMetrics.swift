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

extension AttemptMetrics {
    /// The JSON the store keeps: what `Codable` writes (the same keys, in the same order), written
    /// without its containers, which cost 15,000 instructions with every attempt's end.
    func storedJSON() throws -> String {
        let stream = JSONStream()
        let depth = stream.openContainer(UInt8(ascii: "{"), UInt8(ascii: "}"))
        func field(_ key: CodingKeys, _ write: () throws -> Void) rethrows {
            stream.element(of: depth)
            stream.key(key)
            try write()
        }
        try field(.nameLookupMs) { try stream.double(nameLookupMs) }
        try field(.connectMs) { try stream.double(connectMs) }
        try field(.tlsMs) { try stream.double(tlsMs) }
        try field(.firstByteMs) { try stream.double(firstByteMs) }
        try field(.totalMs) { try stream.double(totalMs) }
        if let httpVersion { field(.httpVersion) { stream.string(httpVersion) } }
        if let remoteAddress { field(.remoteAddress) { stream.string(remoteAddress) } }
        field(.bytesPerSecond) { stream.integer(bytesPerSecond) }
        stream.close(downTo: 0)
        return String(decoding: stream.bytes, as: UTF8.self)
    }
}
