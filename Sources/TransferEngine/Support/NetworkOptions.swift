#if canImport(Glibc)
import Glibc
#endif

/// How a job reaches its server, with curl's options of the same names: a proxy and the hosts
/// that bypass it, timeouts, compression, credentials (a user and password, or a netrc file),
/// the IP version and fixed addresses. Every attempt applies them (`CurlEasy`); the store keeps
/// the real values and `Redaction.network` what may be shown. Thread: a value; any.
public struct NetworkOptions: Codable, Equatable, Sendable {
    /// `--proxy URL` (CURLOPT_PROXY): `scheme://[user:password@]host[:port]`. `""` uses no
    /// proxy whatever the daemon's environment says; nil leaves it to that environment
    /// (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`, as libcurl reads them).
    public var proxy: String?
    /// `--noproxy LIST` (CURLOPT_NOPROXY): hosts reached without the proxy, or `*`.
    public var noProxy: String?
    /// `--connect-timeout S` and `--max-time S`, in seconds (fractions allowed).
    public var connectTimeout: Double?
    public var maxTime: Double?
    /// `--compressed` (downloads): ask for every encoding libcurl decodes, on an attempt that
    /// starts at byte 0 only (see `ResumeState.decoded`).
    public var compressed: Bool
    /// `--user USER:PASSWORD`, negotiated as curl's `--anyauth` (CURLAUTH_ANY). The password
    /// is a secret.
    public var user: String?
    public var password: String?
    /// `--netrc-file FILE` (or `--netrc`: the queueing user's `~/.netrc`), read by the daemon
    /// at each attempt (CURLOPT_NETRC_FILE, CURL_NETRC_REQUIRED).
    public var netrcFile: String?
    /// `-4` / `-6` (CURLOPT_IPRESOLVE).
    public var ipVersion: IPVersion?
    /// `--resolve HOST:PORT:ADDRESS[,ADDRESS]...` (CURLOPT_RESOLVE), in order.
    public var resolve: [String]

    public enum IPVersion: Int, Codable, Equatable, Sendable {
        case v4 = 4
        case v6 = 6
    }

    public init(proxy: String? = nil, noProxy: String? = nil, connectTimeout: Double? = nil, maxTime: Double? = nil,
                compressed: Bool = false, user: String? = nil, password: String? = nil, netrcFile: String? = nil,
                ipVersion: IPVersion? = nil, resolve: [String] = []) {
        self.proxy = proxy
        self.noProxy = noProxy
        self.connectTimeout = connectTimeout
        self.maxTime = maxTime
        self.compressed = compressed
        self.user = user
        self.password = password
        self.netrcFile = netrcFile
        self.ipVersion = ipVersion
        self.resolve = resolve
    }

    public var isDefault: Bool { self == NetworkOptions() }

    /// The request carries credentials of its own (a user, or a netrc file to find them in).
    public var hasCredentials: Bool { user != nil || netrcFile != nil }

    /// What decides where a connection goes (proxy, addresses, IP version), and nothing else:
    /// what a probe of an unreachable host needs to try the job's own way there.
    public var route: NetworkOptions {
        NetworkOptions(proxy: proxy, noProxy: noProxy, ipVersion: ipVersion, resolve: resolve)
    }

    /// Text that tells routes apart (empty for the default one), secrets redacted: offline jobs
    /// wait, and are probed, per host and route.
    public var routeKey: String {
        var parts: [String] = []
        if let proxy { parts.append("proxy=\(Redaction.url(proxy))") }
        if let noProxy { parts.append("noproxy=\(noProxy)") }
        if let ipVersion { parts.append("ipv\(ipVersion.rawValue)") }
        if !resolve.isEmpty { parts.append("resolve=\(resolve.joined(separator: " "))") }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
    }

    /// A timeout in libcurl's milliseconds (at least 1).
    static func milliseconds(_ seconds: Double) -> Int {
        max(1, Int((seconds * 1000).rounded()))
    }

    private enum CodingKeys: String, CodingKey {
        case proxy, noProxy, connectTimeout, maxTime, compressed, user, password, netrcFile, ipVersion, resolve
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        proxy = try container.decodeIfPresent(String.self, forKey: .proxy)
        noProxy = try container.decodeIfPresent(String.self, forKey: .noProxy)
        connectTimeout = try container.decodeIfPresent(Double.self, forKey: .connectTimeout)
        maxTime = try container.decodeIfPresent(Double.self, forKey: .maxTime)
        compressed = try container.decodeIfPresent(Bool.self, forKey: .compressed) ?? false
        user = try container.decodeIfPresent(String.self, forKey: .user)
        password = try container.decodeIfPresent(String.self, forKey: .password)
        netrcFile = try container.decodeIfPresent(String.self, forKey: .netrcFile)
        ipVersion = try container.decodeIfPresent(IPVersion.self, forKey: .ipVersion)
        resolve = try container.decodeIfPresent([String].self, forKey: .resolve) ?? []
    }

    /// Every key, null included.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(proxy, forKey: .proxy)
        try container.encode(noProxy, forKey: .noProxy)
        try container.encode(connectTimeout, forKey: .connectTimeout)
        try container.encode(maxTime, forKey: .maxTime)
        try container.encode(compressed, forKey: .compressed)
        try container.encode(user, forKey: .user)
        try container.encode(password, forKey: .password)
        try container.encode(netrcFile, forKey: .netrcFile)
        try container.encode(ipVersion, forKey: .ipVersion)
        try container.encode(resolve, forKey: .resolve)
    }
}

// MARK: Reading and checking

extension NetworkOptions {
    /// The options as the command line and the job JSON name them.
    public enum Field: String, Sendable, CaseIterable {
        case proxy, noProxy, connectTimeout, maxTime, user, netrcFile, resolve

        /// The curl option: `--connect-timeout`.
        public var option: String {
            switch self {
            case .proxy: "--proxy"
            case .noProxy: "--noproxy"
            case .connectTimeout: "--connect-timeout"
            case .maxTime: "--max-time"
            case .user: "--user"
            case .netrcFile: "--netrc-file"
            case .resolve: "--resolve"
            }
        }
    }

    /// The longest timeout: a year, as `NumericLimits.timeoutSeconds`.
    public static let longestSeconds = Double(NumericLimits.timeoutSeconds.range.upperBound)
    /// The shortest timeout: libcurl counts milliseconds.
    public static let shortestSeconds = 0.001
    /// The proxy schemes libcurl speaks.
    public static let proxySchemes = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    /// `2`, `2.5`, `.5`: decimal seconds (curl's syntax) within the limits.
    public static func seconds(_ text: String, _ field: Field) throws(NetworkOptionError) -> Double {
        let digits = text.filter { $0 != "." }
        guard !digits.isEmpty, digits.allSatisfy(Self.isDigit), text.count - digits.count <= 1,
              let seconds = Double(text) else {
            throw NetworkOptionError(field, text, .seconds)
        }
        try checkSeconds(seconds, field)
        return seconds
    }

    static func checkSeconds(_ seconds: Double, _ field: Field) throws(NetworkOptionError) {
        guard seconds.isFinite, seconds >= shortestSeconds, seconds <= longestSeconds else {
            throw NetworkOptionError(field, Self.describe(seconds: seconds), .seconds)
        }
    }

    /// `proxy.example:3128` is `http://proxy.example:3128`, as curl reads a proxy without a scheme.
    public static func proxyURL(_ text: String) -> String {
        text.isEmpty || text.contains("://") ? text : "http://" + text
    }

    /// `USER:PASSWORD`, split at the first colon as curl splits it.
    public static func credentials(_ text: String) throws(NetworkOptionError) -> (user: String, password: String) {
        guard let colon = text.firstIndex(of: ":") else {
            throw NetworkOptionError(.user, text, .userWithoutPassword)
        }
        let credentials = (user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
        try checkCredentials(user: credentials.user, password: credentials.password)
        return credentials
    }

    static func checkCredentials(user: String, password: String?) throws(NetworkOptionError) {
        let shown = user + ":" + Redaction.marker
        guard !user.isEmpty else { throw NetworkOptionError(.user, shown, .emptyUser) }
        guard !hasControls(user), !hasControls(password ?? "") else {
            throw NetworkOptionError(.user, shown, .controlCharacters)
        }
        if Redaction.isRedacted(user) || password.map(Redaction.isRedacted) == true {
            throw NetworkOptionError(.user, shown, .redacted)
        }
    }

    /// `HOST:PORT:ADDRESS[,ADDRESS]...`, each address IPv4 or IPv6 (bare or in brackets); the
    /// entry as libcurl is given it, IPv6 addresses in brackets.
    public static func resolveEntry(_ text: String) throws(NetworkOptionError) -> String {
        let fields = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3, !fields[0].isEmpty, !fields[2].isEmpty,
              !fields[0].hasPrefix("+"), !fields[0].hasPrefix("-"), !fields[0].hasPrefix("["),
              !fields[0].contains(where: { $0 == " " || $0 == "*" }), !hasControls(text)
        else { throw NetworkOptionError(.resolve, text, .resolveEntry) }
        guard fields[1].allSatisfy(Self.isDigit), let port = Int(fields[1]), (1...65535).contains(port) else {
            throw NetworkOptionError(.resolve, text, .resolvePort)
        }
        var addresses: [String] = []
        for given in fields[2].split(separator: ",", omittingEmptySubsequences: false) {
            let bare = given.hasPrefix("[") && given.hasSuffix("]") ? String(given.dropFirst().dropLast()) : String(given)
            if isAddress(bare, family: AF_INET) {
                addresses.append(bare)
            } else if isAddress(bare, family: AF_INET6) {
                addresses.append("[\(bare)]")
            } else {
                throw NetworkOptionError(.resolve, text, .resolveAddress(String(given)))
            }
        }
        return "\(fields[0]):\(port):\(addresses.joined(separator: ","))"
    }

    /// Every option within its rules (the daemon checks what any client sends; the command
    /// line and manifests read their values with the functions above first).
    public func check() throws(NetworkOptionError) {
        if let proxy, !proxy.isEmpty {
            guard !Redaction.isRedacted(proxy) else { throw NetworkOptionError(.proxy, Redaction.url(proxy), .redacted) }
            let parts: CurlURL.Parts
            do {
                parts = try CurlURL.parse(proxy)
            } catch {
                throw NetworkOptionError(.proxy, Redaction.url(proxy), .proxyURL(error.description))
            }
            guard Self.proxySchemes.contains(parts.scheme) else {
                throw NetworkOptionError(.proxy, Redaction.url(proxy), .proxyScheme)
            }
            guard !parts.host.isEmpty else { throw NetworkOptionError(.proxy, Redaction.url(proxy), .proxyURL("no host")) }
        }
        if let noProxy, Self.hasControls(noProxy) { throw NetworkOptionError(.noProxy, noProxy, .controlCharacters) }
        if let connectTimeout { try Self.checkSeconds(connectTimeout, .connectTimeout) }
        if let maxTime { try Self.checkSeconds(maxTime, .maxTime) }
        if let user {
            try Self.checkCredentials(user: user, password: password)
        } else if password != nil {
            throw NetworkOptionError(.user, Redaction.marker, .emptyUser)
        }
        if let netrcFile {
            guard netrcFile.hasPrefix("/") else { throw NetworkOptionError(.netrcFile, netrcFile, .relativePath) }
            guard !Self.hasControls(netrcFile) else { throw NetworkOptionError(.netrcFile, netrcFile, .controlCharacters) }
        }
        for entry in resolve { _ = try Self.resolveEntry(entry) }
    }

    /// Whether the daemon can read the netrc file (it reads it at every attempt): nil when it
    /// can, else why not. Touches the file system.
    public func netrcProblem() -> NetworkOptionError? {
        guard let netrcFile else { return nil }
        let fd = RawPath.withCString(netrcFile) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            return NetworkOptionError(.netrcFile, netrcFile, .unreadable(uid: ProcessIdentity.uid, reason: SystemError.describe(errno)))
        }
        close(fd)
        return nil
    }

    /// `2`, `2.5`: seconds as given, without a trailing `.0`.
    public static func describe(seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
    }

    private static func isDigit(_ character: Character) -> Bool { ("0"..."9").contains(character) }

    private static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    private static func isAddress(_ text: String, family: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return !text.isEmpty && inet_pton(family, text, &buffer) == 1
    }
}

/// A network option that cannot be used, and why: refused when the job is queued (exit 2 on
/// the command line, `invalid_argument` on the socket, `FILE:N:` in a manifest).
public struct NetworkOptionError: Error, Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        case seconds
        /// libcurl's URL parser refused it (its reason).
        case proxyURL(String)
        case proxyScheme
        case controlCharacters
        case userWithoutPassword
        case emptyUser
        /// A secret as an output shows it (`<redacted>`), not the real one.
        case redacted
        case relativePath
        case resolveEntry
        case resolvePort
        case resolveAddress(String)
        /// The daemon (running as `uid`) cannot open the file.
        case unreadable(uid: UInt32, reason: String)
    }

    public var field: NetworkOptions.Field
    /// The value as given, secrets redacted.
    public var value: String
    public var reason: Reason

    init(_ field: NetworkOptions.Field, _ value: String, _ reason: Reason) {
        self.field = field
        self.value = value
        self.reason = reason
    }

    /// One line naming the command-line option.
    public var message: String { message(naming: field.option) }

    /// One line naming the option as `name` (a manifest names its field).
    public func message(naming name: String) -> String {
        switch reason {
        case .seconds:
            "\(name) must be seconds from \(NetworkOptions.describe(seconds: NetworkOptions.shortestSeconds)) to "
                + "\(NetworkOptions.describe(seconds: NetworkOptions.longestSeconds)) (fractions allowed), got '\(value)'"
        case .proxyURL(let reason): "\(name) '\(value)' is not a proxy URL: \(reason)"
        case .proxyScheme:
            "\(name) '\(value)': a proxy URL starts with "
                + NetworkOptions.proxySchemes.map { "\($0)://" }.joined(separator: ", ")
        case .controlCharacters: "\(name) must not hold control characters"
        case .userWithoutPassword:
            "\(name) takes USER:PASSWORD, got '\(value)' (transferctl does not ask for a password: give 'USER:' "
                + "for an empty one, or keep it out of the command line with --netrc-file FILE)"
        case .emptyUser: "\(name) needs a user name before the ':'"
        case .redacted: "\(name) holds \(Redaction.marker) where a secret was: give the real one"
        case .relativePath: "\(name) must be an absolute path, got '\(value)'"
        case .resolveEntry:
            "\(name) takes HOST:PORT:ADDRESS[,ADDRESS]..., got '\(value)'"
        case .resolvePort: "\(name) '\(value)': the port must be a number from 1 to 65535"
        case .resolveAddress(let address): "\(name) '\(value)': '\(address)' is not an IPv4 or IPv6 address"
        case .unreadable(let uid, let reason):
            "\(name) \(value): transferd (uid \(uid)) cannot read it: \(reason) (the daemon reads the file at every attempt)"
        }
    }
}
