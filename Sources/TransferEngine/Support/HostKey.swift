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
        let authority = authority(host, port)
        return ("\(scheme)://\(authority)", "http://\(authority)/")
    }

    /// The key alone (what the decision core asks of every job it takes in).
    static func key(_ url: String) -> String? {
        var url = url
        if let key = url.withUTF8(writtenKey) { return key }
        guard let (scheme, host, port) = plain(url) ?? foundation(url) else { return nil }
        return "\(scheme)://\(authority(host, port))"
    }

    private static func authority(_ host: String, _ port: Int) -> String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The key when the URL begins with it as written — `http://host:8080/…`: a lowercase
    /// scheme, no userinfo, the port as its number — one copy of those bytes (the key spelt
    /// from its parts was ~3,000 instructions of each job's adoption, on the start's path).
    private static func writtenKey(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let shape = shape(bytes), shape.hostStart == shape.colon + 3, shape.hostEnd + 1 < shape.authorityEnd,
              bytes[shape.hostEnd + 1] != UInt8(ascii: "0"),
              !bytes[..<shape.colon].contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<shape.authorityEnd]), as: UTF8.self)
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
        var url = url
        return url.withUTF8(plain)
    }

    /// Over the URL's bytes by integer offsets: the same walk over `String.UTF8View`'s indices
    /// cost ~10,000 instructions a job (every job adopted asks for its key).
    private static func plain(_ bytes: UnsafeBufferPointer<UInt8>) -> (scheme: String, host: String, port: Int)? {
        guard let shape = shape(bytes) else { return nil }
        // The scheme's bytes are ASCII letters, digits, `+`, `-` and `.`: lower-cased byte by byte.
        let scheme = String(decoding: bytes[..<shape.colon].map { isLetter($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        let host = String(decoding: UnsafeBufferPointer(rebasing: bytes[shape.hostStart..<shape.hostEnd]), as: UTF8.self)
        return (scheme, host, shape.port ?? defaultPort(scheme))
    }

    /// Where the parts of a URL of the common shape lie in its bytes.
    private struct Shape {
        /// The `:` after the scheme.
        var colon: Int
        var hostStart: Int
        var hostEnd: Int
        /// The `/`, `?` or `#` after the authority, or the end.
        var authorityEnd: Int
        /// The port written after the host; nil for none, or an empty one.
        var port: Int?
    }

    private static func shape(_ bytes: UnsafeBufferPointer<UInt8>) -> Shape? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, isLetter(bytes[0]),
              bytes[..<colon].allSatisfy(isSchemeByte), colon + 3 <= bytes.count,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else { return nil }
        let authorityStart = colon + 3
        var authorityEnd = authorityStart
        while authorityEnd < bytes.count, !isAuthorityEnd(bytes[authorityEnd]) { authorityEnd += 1 }
        // Past the last `@` (userinfo, which may hold `:`): the host, then `:port` or nothing.
        var hostStart = authorityStart
        for index in authorityStart..<authorityEnd where bytes[index] == UInt8(ascii: "@") { hostStart = index + 1 }
        var hostEnd = hostStart
        while hostEnd < authorityEnd, bytes[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
        guard hostEnd > hostStart, bytes[hostStart..<hostEnd].allSatisfy(isHostByte) else { return nil }
        var port: Int?
        if hostEnd < authorityEnd {
            let digits = bytes[(hostEnd + 1)..<authorityEnd]
            guard digits.count <= 5, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            if !digits.isEmpty {
                let number = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                guard number <= 65535 else { return nil }
                port = number
            }
        }
        return Shape(colon: colon, hostStart: hostStart, hostEnd: hostEnd, authorityEnd: authorityEnd, port: port)
    }

    private static func isAuthorityEnd(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
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
