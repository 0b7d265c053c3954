import FoundationEssentials

/// `scheme://host:port` of a URL: what per-host connection caps and offline probes count by.
enum HostKey {
    /// The key and a plain `http://host:port/` URL for a connect-only probe; nil for a URL
    /// without a scheme or host.
    static func parse(_ url: String) -> (key: String, probeURL: String)? {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host,
              !host.isEmpty else { return nil }
        let port = parsed.port ?? (scheme == "https" ? 443 : 80)
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return ("\(scheme)://\(authority)", "http://\(authority)/")
    }
}
