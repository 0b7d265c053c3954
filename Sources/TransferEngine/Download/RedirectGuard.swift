import FoundationEssentials

/// Where a download's secret headers (`Redaction`: `Authorization`, `Proxy-Authorization`,
/// `Cookie`, `X-Api-Key`…) and its `--user` credentials may go when the server redirects it: only to the origin (scheme, host
/// and port) of the job's URL, unless the job trusts every location (`--location-trusted`).
/// libcurl, following redirects itself, drops only `Authorization` and `Cookie` at another
/// host, so a request that carries a secret is never left to it: transferd follows those
/// redirects one by one (`AttemptOutcome.redirect`), keeping the secrets at the origin and
/// dropping them for good at the first step elsewhere, from where libcurl may follow the rest.
/// Pure. Thread: any.
struct RedirectGuard: Sendable {
    /// How many redirects one attempt follows, as curl's `--max-redirs 10`.
    static let maxRedirects = 10

    /// The job's URL: its origin may see the secrets.
    let jobURL: String
    let tls: TLSOptions
    /// Names (lower-cased) of the attempt's headers that are secrets whatever they are called:
    /// every header `--header-command` printed (`Private-Token`, `X-Vault-Token`, …).
    var secretNames: Set<String> = []

    /// A header this request may carry only to the job's origin.
    func isSecret(_ header: String) -> Bool {
        if Redaction.isSecret(header: header) { return true }
        guard !secretNames.isEmpty, let colon = header.firstIndex(of: ":") else { return false }
        return secretNames.contains(String(header[..<colon]).trimmingSpaces.lowercased())
    }

    /// Whether libcurl may follow the redirects of a request with `headers` by itself (it
    /// would send every header but `Authorization` and `Cookie` to any host).
    func libcurlMayFollow(_ headers: [String]) -> Bool {
        tls.locationTrusted || !headers.contains(where: isSecret)
    }

    /// The headers of the step to `url` of a request that had `headers`: the secrets only at
    /// the job's origin.
    func headers(_ headers: [String], to url: String) -> [String] {
        sendsSecrets(to: url) ? headers : headers.filter { !isSecret($0) }
    }

    /// The lower-cased names of `headers` (`Name: value` lines).
    static func names(_ headers: [String]) -> Set<String> {
        Set(headers.compactMap { header in
            header.firstIndex(of: ":").map { String(header[..<$0]).trimmingSpaces.lowercased() }
        })
    }

    /// Whether a request to `url` may carry the job's secrets (its secret headers, its `--user`
    /// credentials): at the job's origin, or anywhere with `--location-trusted`.
    func sendsSecrets(to url: String) -> Bool {
        tls.locationTrusted || url == jobURL || (Self.origin(of: url).map { $0 == Self.origin(of: jobURL) } ?? false)
    }

    /// Why the step to `url` may not be taken: https to http, unless the job allows it (as
    /// libcurl refuses the redirects it follows; a scheme other than http and https libcurl
    /// refuses when the step starts).
    func refusal(of url: String) -> TransferError? {
        Self.origin(of: url)?.scheme == "http" && !tls.redirectSchemes(from: jobURL).contains("http") ? .insecureRedirect(to: url) : nil
    }

    struct Origin: Equatable {
        var scheme: String
        var host: String
        var port: Int
    }

    /// `scheme://host:port`, with the scheme's default port when none is given.
    static func origin(of url: String) -> Origin? {
        if let (scheme, host, port) = HostKey.plain(url) { return Origin(scheme: scheme, host: host.lowercased(), port: port) }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host?.lowercased() else {
            return nil
        }
        return Origin(scheme: scheme, host: host, port: parsed.port ?? (scheme == "https" ? 443 : 80))
    }
}
