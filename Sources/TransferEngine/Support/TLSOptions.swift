/// How a job checks the server, and proves itself: verification is always on unless `insecure`;
/// and where redirects may take it.
public struct TLSOptions: Codable, Equatable, Sendable {
    /// A CA bundle (PEM) to trust instead of the system's.
    public var cacert: String?
    /// `sha256//BASE64` of the server's public key (libcurl's CURLOPT_PINNEDPUBLICKEY).
    public var pinnedPublicKey: String?
    /// A client certificate and its key (PEM).
    public var cert: String?
    public var key: String?
    /// No certificate or host-name verification: only when asked, shown and logged.
    public var insecure: Bool
    /// Follow a redirect from https to http (refused otherwise).
    public var allowInsecureRedirect: Bool
    /// Send the secret headers (`Redaction`) to wherever a redirect goes, as curl's
    /// `--location-trusted`; otherwise they reach only the origin of the job's URL.
    public var locationTrusted: Bool

    public init(cacert: String? = nil, pinnedPublicKey: String? = nil, cert: String? = nil, key: String? = nil,
                insecure: Bool = false, allowInsecureRedirect: Bool = false, locationTrusted: Bool = false) {
        self.cacert = cacert
        self.pinnedPublicKey = pinnedPublicKey
        self.cert = cert
        self.key = key
        self.insecure = insecure
        self.allowInsecureRedirect = allowInsecureRedirect
        self.locationTrusted = locationTrusted
    }

    public var isDefault: Bool { self == TLSOptions() }

    /// The schemes a request to `url` may be redirected to: only https from https, unless
    /// `allowInsecureRedirect`.
    public func redirectSchemes(from url: String) -> [String] {
        url.lowercased().hasPrefix("https:") && !allowInsecureRedirect ? ["https"] : ["http", "https"]
    }

    private enum CodingKeys: String, CodingKey {
        case cacert, pinnedPublicKey, cert, key, insecure, allowInsecureRedirect, locationTrusted
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        cacert = try container.decodeIfPresent(String.self, forKey: .cacert)
        pinnedPublicKey = try container.decodeIfPresent(String.self, forKey: .pinnedPublicKey)
        cert = try container.decodeIfPresent(String.self, forKey: .cert)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        insecure = try container.decodeIfPresent(Bool.self, forKey: .insecure) ?? false
        allowInsecureRedirect = try container.decodeIfPresent(Bool.self, forKey: .allowInsecureRedirect) ?? false
        locationTrusted = try container.decodeIfPresent(Bool.self, forKey: .locationTrusted) ?? false
    }

    /// Every key, null included.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(cacert, forKey: .cacert)
        try container.encode(pinnedPublicKey, forKey: .pinnedPublicKey)
        try container.encode(cert, forKey: .cert)
        try container.encode(key, forKey: .key)
        try container.encode(insecure, forKey: .insecure)
        try container.encode(allowInsecureRedirect, forKey: .allowInsecureRedirect)
        try container.encode(locationTrusted, forKey: .locationTrusted)
    }
}
