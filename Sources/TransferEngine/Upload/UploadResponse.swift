/// What the server answered to an upload: APIs answer with an id the user needs.
public struct UploadResponse: Codable, Equatable, Sendable {
    /// At most this much of the body is kept.
    public static let bodyLimit = 64 * 1024

    public var status: Int
    public var headers: [String]
    public var body: [UInt8]
    /// The body was longer than `bodyLimit`.
    public var truncated: Bool

    public init(status: Int, headers: [String] = [], body: [UInt8] = [], truncated: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.truncated = truncated
    }

    /// Keeps the start of the body.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let room = Self.bodyLimit - body.count
        if bytes.count > room { truncated = true }
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
    }

    private enum CodingKeys: String, CodingKey { case status, headers, body, truncated }

    /// In JSON the body is text (UTF-8, invalid bytes replaced).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(headers, forKey: .headers)
        try container.encode(String(decoding: body, as: UTF8.self), forKey: .body)
        try container.encode(truncated, forKey: .truncated)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(Int.self, forKey: .status)
        headers = try container.decode([String].self, forKey: .headers)
        body = Array(try container.decode(String.self, forKey: .body).utf8)
        truncated = try container.decode(Bool.self, forKey: .truncated)
    }
}
