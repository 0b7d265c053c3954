/// How a job reaches a server that keeps uploads across requests: a tus 1.0 endpoint or an S3
/// (or S3-compatible) store, with the settings the protocol needs. Nil on a job: plain HTTP.
/// Thread: a value; any.
public struct RemoteOptions: Codable, Equatable, Sendable {
    public enum Kind: String, Codable, Sendable {
        /// tus 1.0 (tus.io): created with POST, continued with PATCH from the server's offset.
        case tus
        /// S3: signed with SigV4; uploads above a size in parts (multipart upload).
        case s3
    }

    public var kind: Kind
    /// S3: the endpoint of an S3-compatible store (`http://127.0.0.1:9000`; nil: AWS itself).
    public var endpoint: String?
    /// S3: the region signed for (nil: the daemon's AWS configuration, else us-east-1).
    public var region: String?
    /// S3: the profile of the shared credentials file (nil: `AWS_PROFILE`, else `default`).
    public var profile: String?
    /// Bytes per PATCH (tus) or per part (S3); nil: the protocol's default.
    public var chunkSize: Int64?

    public init(kind: Kind, endpoint: String? = nil, region: String? = nil, profile: String? = nil, chunkSize: Int64? = nil) {
        self.kind = kind
        self.endpoint = endpoint
        self.region = region
        self.profile = profile
        self.chunkSize = chunkSize
    }

    /// tus PATCH requests carry at most this much: a server that dies mid-request keeps what it
    /// had saved before it, so this bounds what is sent twice.
    public static let defaultTusChunk: Int64 = 32 * 1024 * 1024
    public static let minimumChunk: Int64 = 64 * 1024
}
