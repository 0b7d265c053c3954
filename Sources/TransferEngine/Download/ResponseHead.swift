/// The status line and headers of one HTTP response, parsed line by line as libcurl delivers them.
public struct ResponseHead: Equatable, Sendable {
    public var status: Int
    /// Lower-cased field names; the last value wins.
    public var fields: [String: String]
    /// The header lines as received (`Name: value`), in order.
    public var lines: [String]

    public init(status: Int, fields: [String: String] = [:], lines: [String] = []) {
        self.status = status
        self.fields = fields
        self.lines = lines
    }

    public var etag: String? { fields["etag"] }
    public var lastModified: String? { fields["last-modified"] }
    public var location: String? { fields["location"] }
    /// nil when absent, or past `NumericLimits.bytes` (an unknown length, never a huge one).
    public var contentLength: Int64? { fields["content-length"].flatMap(ContentRange.byteCount) }
    public var contentRange: ContentRange? { fields["content-range"].flatMap(ContentRange.init) }
    public var validators: Validators { Validators(etag: etag, lastModified: lastModified) }
}

/// Accumulates header lines; yields a head at each blank line (redirects and 1xx produce several).
public struct ResponseHeadParser: Sendable {
    private var current: ResponseHead?

    public init() {}

    /// Feeds one line (with or without its CRLF); returns the head when the line ends it.
    public mutating func consume(_ line: String) -> ResponseHead? {
        let text = line.droppingLineEnd
        if text.hasPrefix("HTTP/") {
            let parts = text.split(separator: " ", maxSplits: 2)
            let status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            current = ResponseHead(status: NumericLimits.httpStatus.contains(status) ? status : 0)
            return nil
        }
        if text.isEmpty {
            defer { current = nil }
            return current
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].lowercased()
        let value = String(text[text.index(after: colon)...]).trimmingSpaces
        current?.fields[name] = value
        current?.lines.append(text)
        return nil
    }
}

/// `Content-Range: bytes first-last/total` (or `bytes */total` on a 416).
public struct ContentRange: Equatable, Sendable {
    public var first: Int64?
    public var last: Int64?
    public var total: Int64?

    public init(first: Int64?, last: Int64?, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }

    public init?(_ text: String) {
        let trimmed = text.trimmingSpaces
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = String(trimmed.dropFirst(6)).trimmingSpaces
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2 else { return nil }
        total = halves[1] == "*" ? nil : Self.byteCount(halves[1])
        if halves[1] != "*", total == nil { return nil }
        if halves[0] == "*" {
            first = nil
            last = nil
        } else {
            let bounds = halves[0].split(separator: "-", maxSplits: 1)
            guard bounds.count == 2, let first = Self.byteCount(bounds[0]), let last = Self.byteCount(bounds[1]),
                  first <= last
            else { return nil }
            self.first = first
            self.last = last
        }
    }

    /// A server's byte offset or length, within `NumericLimits.bytes` (else not usable).
    static func byteCount(_ text: some StringProtocol) -> Int64? {
        Int64(text).flatMap { NumericLimits.bytes.contains($0) ? $0 : nil }
    }
}

extension String {
    /// Without trailing CR and LF bytes (by UTF-8 byte: "\r\n" is a single Character).
    var droppingLineEnd: String {
        var bytes = Substring(self).utf8
        while let last = bytes.last, last == 10 || last == 13 { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }
}
