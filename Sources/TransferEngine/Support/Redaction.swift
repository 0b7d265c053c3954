/// The one rule set that keeps secrets out of every output (job JSON, `list`, `show`,
/// `show --curl`, events, the log, hooks' environment, resume data): the value of a header,
/// query parameter or form field with a secret name, and the password of a URL, print as
/// `<redacted>`. Requests still carry the real values. Pure; thread: any.
public enum Redaction {
    public static let marker = "<redacted>"

    /// Secret names, compared without case: credential headers, and the parameters of presigned
    /// URLs (S3, GCS, Azure's `sig`), S3 and GCS presigned POST forms and common API tokens.
    public static let secretNames: Set<String> = [
        "authorization", "cookie", "proxy-authorization", "x-api-key", "api-key", "x-auth-token",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential",
        "sig", "signature", "token", "access_token", "api_key", "apikey", "key", "password", "policy",
    ]

    /// Words of a name (split at `-`, `_`, `.`) that make it a secret wherever they stand:
    /// `Private-Token`, `X-Vault-Token`, `X-Client-Secret`, `db_password`, `X-Session-Id`;
    /// a word ending in `token` or `secret` too (`accesstoken`, `clientsecret`).
    public static let secretWords: Set<String> = ["token", "secret", "password", "passwd", "credential", "credentials",
                                                  "signature", "session", "cookie", "apikey", "private", "authorization"]

    public static func isSecret(name: some StringProtocol) -> Bool {
        let lowered = name.lowercased()
        if secretNames.contains(lowered) { return true }
        return lowered.split(whereSeparator: { $0 == "-" || $0 == "_" || $0 == "." }).contains { word in
            secretWords.contains(String(word)) || word.hasSuffix("token") || word.hasSuffix("secret")
        }
    }

    /// The text holds a redacted value: it came from an output, not from the user.
    public static func isRedacted(_ text: String) -> Bool {
        // Compared as UTF-8 bytes: `String.contains` of a string costs more than the rest of
        // checking a URL (a manifest line's check).
        let marker = marker.utf8
        let bytes = text.utf8
        var start = bytes.startIndex
        while let first = bytes[start...].firstIndex(of: marker.first!) {
            if bytes[first...].starts(with: marker) { return true }
            start = bytes.index(after: first)
        }
        return false
    }

    // MARK: Headers

    public static func isSecret(header: String) -> Bool {
        guard let colon = header.firstIndex(of: ":") else { return false }
        return isSecret(name: header[..<colon])
    }

    /// `Authorization: Bearer x` → `Authorization: <redacted>`.
    public static func headers(_ headers: [String]) -> [String] {
        headers.map { header in
            guard isSecret(header: header), let colon = header.firstIndex(of: ":") else { return header }
            return "\(header[..<colon]): \(marker)"
        }
    }

    /// The headers that may leave the daemon as they are (resume-data exports).
    public static func withoutSecrets(_ headers: [String]) -> [String] {
        headers.filter { !isSecret(header: $0) }
    }

    /// A session as it may be shown: its URL redacted like any URL.
    public static func session(_ session: UploadSession) -> UploadSession {
        var shown = session
        shown.url = session.url.map(url)
        return shown
    }

    // MARK: URLs

    /// `https://user:pw@host/p?X-Amz-Signature=abc&a=1#token=t` →
    /// `https://user:<redacted>@host/p?X-Amz-Signature=<redacted>&a=1#token=<redacted>`.
    /// Text that is not a URL is redacted as if it were one (it may be echoed in an error).
    public static func url(_ url: String) -> String {
        // Nothing to redact without a password (before an '@'), a query or a fragment: most
        // URLs, each shown in its job's events.
        // Over the contiguous bytes: `utf8.contains(where:)` took ~30 instructions a byte.
        let mayHoldSecrets = url.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.contains { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
        }
        guard mayHoldSecrets ?? true else { return url }
        let start = url.firstRange(of: "://")?.upperBound ?? url.startIndex
        let rest = url[start...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            authority = String(authority[..<colon]) + ":" + marker + authority[at...]
        }
        var tail = String(rest[authorityEnd...])
        var fragment: String?
        if let hash = tail.firstIndex(of: "#") {
            fragment = String(tail[tail.index(after: hash)...])
            tail = String(tail[..<hash])
        }
        if let question = tail.firstIndex(of: "?") {
            tail = String(tail[...question]) + parameters(String(tail[tail.index(after: question)...]))
        }
        return String(url[..<start]) + authority + tail + (fragment.map { "#" + parameters($0) } ?? "")
    }

    /// `a=1&token=x` → `a=1&token=<redacted>`; names are compared percent-decoded.
    private static func parameters(_ query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "="), isSecret(name: percentDecoded(pair[..<equals])) else {
                return String(pair)
            }
            return String(pair[...equals]) + marker
        }.joined(separator: "&")
    }

    private static func percentDecoded(_ text: Substring) -> String {
        String(decoding: PercentEncoding.decode(text), as: UTF8.self)
    }

    // MARK: Forms

    /// Text fields with a secret name (an S3 presigned POST's `policy`, `x-amz-signature`, ...)
    /// keep their name; their value is redacted. File parts are shown as they are.
    public static func form(_ parts: [FormPart]) -> [FormPart] {
        parts.map { part in
            guard case .field(let name, _) = part, isSecret(name: name) else { return part }
            return .field(name: name, value: marker)
        }
    }

    // MARK: Network options

    /// A job's network options as they may be shown: the password as `<redacted>`, the proxy's
    /// URL redacted as any URL (its password, its secret parameters).
    public static func network(_ options: NetworkOptions) -> NetworkOptions {
        var shown = options
        shown.proxy = options.proxy.map(url)
        if options.password != nil { shown.password = marker }
        return shown
    }

    /// An upload's spec as it may be shown.
    public static func upload(_ spec: UploadSpec?) -> UploadSpec? {
        guard var spec else { return nil }
        spec.form = spec.form.map(form)
        return spec
    }
}
