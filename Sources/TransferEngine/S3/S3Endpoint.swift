/// Where S3 requests go: AWS itself (no custom URL) or an S3-compatible server at a custom
/// URL (`http://127.0.0.1:9000`, `https://minio.example:9000`), its region (the one requests
/// are signed for), and how the bucket is addressed. Pure. Thread: a value; any.
public struct S3Endpoint: Equatable, Sendable {
    /// How a bucket appears in a URL.
    public enum Addressing: String, Codable, Equatable, Sendable, CaseIterable {
        /// Path-style for a custom endpoint; for AWS virtual-hosted, but path-style for a
        /// bucket with dots (a dotted name does not match the `*.s3.REGION.amazonaws.com`
        /// certificate).
        case automatic
        /// `ENDPOINT/BUCKET/KEY`.
        case path
        /// `BUCKET.HOST/KEY`.
        case virtualHosted = "virtual_hosted"
    }

    /// `scheme://host[:port][/base]`, without a trailing `/`; nil: AWS.
    public let customURL: String?
    public let region: String
    public let addressing: Addressing

    /// AWS in `region`, or the server at `url`. Throws for a URL that is not
    /// `http(s)://HOST[:PORT][/PATH]` (no user, query or fragment) or a malformed region.
    public init(url: String? = nil, region: String, addressing: Addressing = .automatic) throws(S3LocationError) {
        try Self.check(region: region)
        self.region = region
        self.addressing = addressing
        customURL = try url.map { (url) throws(S3LocationError) in try Self.normalized(url) }
    }

    /// A region as it goes into a host name and the SigV4 scope: letters, digits, hyphens.
    public static func check(region: String) throws(S3LocationError) {
        guard (1...64).contains(region.utf8.count),
              region.utf8.allSatisfy({ S3Encoding.isUnreserved($0) && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "_")
                                       && $0 != UInt8(ascii: "~") }) else {
            throw S3LocationError(region, .region)
        }
    }

    /// Whether requests for `bucket` put it in the path.
    public func usesPathStyle(bucket: String) -> Bool {
        switch addressing {
        case .path: true
        case .virtualHosted: false
        case .automatic: customURL != nil || bucket.contains(".")
        }
    }

    /// A request URL: `path` is the encoded `/KEY`.
    func url(bucket: String, path: String, query: S3Query) -> String {
        let pathStyle = usesPathStyle(bucket: bucket)
        let base: String
        if let customURL {
            if pathStyle {
                base = customURL + "/" + bucket
            } else {
                let schemeEnd = customURL.firstRange(of: "://")!.upperBound
                base = customURL[..<schemeEnd] + bucket + "." + customURL[schemeEnd...]
            }
        } else {
            base = pathStyle ? "https://s3.\(region).amazonaws.com/\(bucket)" : "https://\(bucket).s3.\(region).amazonaws.com"
        }
        return base + path + query.encoded
    }

    private static func normalized(_ url: String) throws(S3LocationError) -> String {
        func refuse(_ why: String) -> S3LocationError { S3LocationError(Redaction.url(url), .endpoint(why)) }
        guard let schemeEnd = url.firstRange(of: "://") else { throw refuse("no scheme") }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw refuse("the scheme must be http or https") }
        var rest = url[schemeEnd.upperBound...]
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains(where: { $0 == "?" || $0 == "#" || $0 == "@" }) else {
            throw refuse("no user, query or fragment")
        }
        guard !rest.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw refuse("no spaces or control characters")
        }
        let authority = rest.prefix { $0 != "/" }
        guard !authority.isEmpty, !authority.hasPrefix(":") else { throw refuse("no host") }
        let normalized = scheme + "://" + rest
        do {
            _ = try CurlURL.parse(normalized)
        } catch {
            throw refuse(error.description)
        }
        return normalized
    }
}
