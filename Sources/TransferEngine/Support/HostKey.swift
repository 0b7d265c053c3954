import FoundationEssentials

/// `scheme://host:port` of a URL: what per-host connection caps and offline probes count by.
/// The decision core asks for the key of every job it adopts: the common shape
/// (`scheme://[userinfo@]host[:port]` then `/`, `?`, `#` or the end, the host a plain name or
/// IPv4 address) is read in place; anything else (an IPv6 literal, percent-encoding, a non-ASCII
/// host) by Foundation's `URL`, which took ~10 µs a job (BENCHMARKS.md). Both read the same key
/// (`HostKeyTests`). Pure. Thread: any.
enum HostKey {
    /// The key and a plain `http://host:port/` URL for a connect-only probe; nil for a URL
    /// without a scheme or host.
    static func parse(_ url: String) -> (key: String, probeURL: String)? {
        guard let (scheme, host, port) = plain(url) ?? foundation(url) else { return nil }
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return ("\(scheme)://\(authority)", "http://\(authority)/")
    }

    /// The scheme (lowercased), host and port (the scheme's default when none is given) as
    /// Foundation's `URL` reads them.
    static func foundation(_ url: String) -> (scheme: String, host: String, port: Int)? {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host,
              !host.isEmpty else { return nil }
        return (scheme, host, parsed.port ?? defaultPort(scheme))
    }

    /// The same, read in place for the common shape; nil for any other (then `foundation`).
    static func plain(_ url: String) -> (scheme: String, host: String, port: Int)? {
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > bytes.startIndex,
              bytes[bytes.startIndex...].prefix(while: { $0 != UInt8(ascii: ":") }).allSatisfy(isSchemeByte),
              isLetter(bytes[bytes.startIndex]), bytes[colon...].starts(with: "://".utf8) else { return nil }
        let authorityStart = bytes.index(colon, offsetBy: 3)
        let rest = bytes[authorityStart...]
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        // Past the last `@` (userinfo, which may hold `:`): the host, then `:port` or nothing.
        let hostAndPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] } ?? authority
        let host = hostAndPort.prefix { $0 != UInt8(ascii: ":") }
        guard !host.isEmpty, host.allSatisfy(isHostByte) else { return nil }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        var port = defaultPort(scheme)
        if host.endIndex < hostAndPort.endIndex {
            let digits = hostAndPort[hostAndPort.index(after: host.endIndex)...]
            guard digits.count <= 5, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            if !digits.isEmpty {
                port = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                guard port <= 65535 else { return nil }
            }
        }
        return (scheme, String(decoding: host, as: UTF8.self), port)
    }

    private static func defaultPort(_ scheme: String) -> Int { scheme == "https" ? 443 : 80 }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// A registered name's letters, digits, `-`, `.` and `_`: nothing to decode or normalize.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
    }
}
