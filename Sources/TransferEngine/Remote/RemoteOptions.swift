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
    /// S3: parts sent at once (nil: `defaultPartsInFlight`); never more than the daemon's
    /// `--max-per-host`.
    public var partsInFlight: Int?

    public init(kind: Kind, endpoint: String? = nil, region: String? = nil, profile: String? = nil, chunkSize: Int64? = nil,
                partsInFlight: Int? = nil) {
        self.kind = kind
        self.endpoint = endpoint
        self.region = region
        self.profile = profile
        self.chunkSize = chunkSize
        self.partsInFlight = partsInFlight
    }

    public static let defaultPartsInFlight = 4
    public static let partsInFlightRange = 1...16

    /// tus PATCH requests carry at most this much: a server that dies mid-request keeps what it
    /// had saved before it, so this bounds what is sent twice.
    public static let defaultTusChunk: Int64 = 32 * 1024 * 1024
    public static let minimumChunk: Int64 = 64 * 1024
}

extension RemoteOptions {
    /// Options that do not go with the URL they were given for: one line to show.
    public struct Refusal: Error, Equatable, Sendable {
        public var message: String
        init(_ message: String) { self.message = message }
    }

    /// The settings a command line or a manifest line gives for `url`: `tus` for an http(s) tus
    /// endpoint, S3 for an `s3://BUCKET/KEY` URL; nil for plain HTTP. Refuses options that do not
    /// go with the URL (the message names the command line's options).
    public static func chosen(for url: String, tus: Bool, endpoint: String?, region: String?, profile: String?,
                              chunkSize: Int64?, partsInFlight: Int? = nil) throws(RemoteOptions.Refusal) -> RemoteOptions? {
        let s3 = url.lowercased().hasPrefix("s3://")
        if tus, s3 { throw Refusal("--tus takes the http(s) URL of a tus endpoint, not an s3:// URL") }
        if !s3, endpoint != nil || region != nil || profile != nil {
            throw Refusal("--s3-endpoint, --region and --profile go with an s3://BUCKET/KEY URL")
        }
        if !s3, !tus, chunkSize != nil { throw Refusal("--chunk-size goes with --tus or an s3:// URL") }
        if !s3, partsInFlight != nil { throw Refusal("--parts-in-flight goes with an s3:// URL") }
        if let partsInFlight, !partsInFlightRange.contains(partsInFlight) {
            throw Refusal("--parts-in-flight must be \(partsInFlightRange.lowerBound) to \(partsInFlightRange.upperBound), got \(partsInFlight)")
        }
        if tus { return RemoteOptions(kind: .tus, chunkSize: chunkSize) }
        guard s3 else { return nil }
        return RemoteOptions(kind: .s3, endpoint: endpoint, region: region, profile: profile, chunkSize: chunkSize,
                             partsInFlight: partsInFlight)
    }
}
