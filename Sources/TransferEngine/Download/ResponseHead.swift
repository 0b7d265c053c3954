/// The status line and headers of one HTTP response, parsed line by line as libcurl delivers them.
public struct ResponseHead: Equatable, Sendable {
    public var status: Int
    /// Lower-cased field names; the last value wins. Only the parser's `fieldsKept` when it was
    /// given them (a download's: `downloadFields`).
    public var fields: [String: String]
    /// The header lines as received (`Name: value`), in order; empty unless the parser was asked
    /// to keep them (`ResponseHeadParser(keepingLines:)`).
    public var lines: [String]

    public init(status: Int, fields: [String: String] = [:], lines: [String] = []) {
        self.status = status
        self.fields = fields
        self.lines = lines
    }

    /// Every field a download reads, here or in `DownloadTransfer` and `DownloadDecision`: its
    /// parser keeps no other (nginx sends eight with a file, a CDN twenty; three of them matter).
    static let downloadFields: Set<String> = ["etag", "last-modified", "location", "content-length", "content-range",
                                              "content-encoding", "retry-after", "content-disposition", "www-authenticate"]

    public var etag: String? { fields["etag"] }
    public var lastModified: String? { fields["last-modified"] }
    public var location: String? { fields["location"] }
    /// nil when absent, or past `NumericLimits.bytes` (an unknown length, never a huge one).
    public var contentLength: Int64? { fields["content-length"].flatMap(ContentRange.byteCount) }
    public var contentRange: ContentRange? { fields["content-range"].flatMap(ContentRange.init) }
    public var validators: Validators { Validators(etag: etag, lastModified: lastModified) }
    /// The body is sent in a content coding (`Content-Encoding: gzip`, …), not as the entity's
    /// own bytes (`identity`).
    public var isContentEncoded: Bool {
        guard let codings = fields["content-encoding"] else { return false }
        return codings.split(separator: ",").contains { coding in
            let name = String(coding).trimmingSpaces.lowercased()
            return !name.isEmpty && name != "identity"
        }
    }
}

/// Accumulates header lines; yields a head at each blank line (redirects and 1xx produce several).
public struct ResponseHeadParser: Sendable {
    private var current: ResponseHead?
    /// Whether each head keeps its lines as received: an upload reports them (its response), a
    /// download reads only fields — and a line is a string of its own to build, ~10 per response.
    private let keepsLines: Bool
    /// nginx sends 8 header fields with a file, S3 servers and CDNs 10 to 20.
    private static let usualFieldCount = 16

    /// The names of the fields kept (nil: all).
    private let fieldsKept: Set<String>?

    public init(keepingLines: Bool = false) {
        keepsLines = keepingLines
        fieldsKept = nil
    }

    /// A parser that keeps only the fields named in `fields` (lower-cased), and no lines.
    init(keepingOnly fields: Set<String>) {
        keepsLines = false
        fieldsKept = fields
    }

    /// Feeds one line (with or without its CRLF); returns the head when the line ends it.
    public mutating func consume(_ line: String) -> ResponseHead? {
        var line = line
        return line.withUTF8 { consume(UnsafeRawBufferPointer($0)) }
    }

    /// The same for a line as libcurl hands it over, read by byte (a header is ASCII; anything
    /// else is kept as UTF-8 with replacement characters).
    public mutating func consume(_ line: UnsafeRawBufferPointer) -> ResponseHead? {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let text = UnsafeRawBufferPointer(rebasing: line[..<end])
        if text.starts(with: "HTTP/".utf8) {
            // Room for a usual response's headers: no growing (and rehashing) line by line.
            var head = ResponseHead(status: Self.status(text))
            head.fields.reserveCapacity(fieldsKept?.count ?? Self.usualFieldCount)
            if keepsLines { head.lines.reserveCapacity(Self.usualFieldCount) }
            current = head
            return nil
        }
        if text.isEmpty {
            defer { current = nil }
            return current
        }
        guard current != nil, let colon = text.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        // Lower-cased in a buffer of its own: `String(decoding:)` of a contiguous buffer takes
        // the fast path, of a lazy map the slow one.
        let name = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: colon) { buffer in
            for index in 0..<colon { buffer[index] = Self.lowercased(text[index]) }
            return String(decoding: buffer, as: UTF8.self)
        }
        if let fieldsKept, !fieldsKept.contains(name) { return nil }
        var first = colon + 1, last = end
        while first < last, Self.isSpace(text[first]) { first += 1 }
        while last > first, Self.isSpace(text[last - 1]) { last -= 1 }
        current?.fields[name] = String(decoding: UnsafeRawBufferPointer(rebasing: text[first..<last]), as: UTF8.self)
        if keepsLines { current?.lines.append(String(decoding: text, as: UTF8.self)) }
        return nil
    }

    /// The status code of `HTTP/x y reason` (0 when there is none in range).
    private static func status(_ line: UnsafeRawBufferPointer) -> Int {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return 0 }
        var status = 0, digits = 0
        for byte in line[(space + 1)...] {
            guard byte != UInt8(ascii: " ") else { break }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < 4 else { return 0 }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 && NumericLimits.httpStatus.contains(status) ? status : 0
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
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

    /// `bytes 0-(T-1)/T` (with a body of `length` bytes, when known): the whole entity.
    func coversWhole(length: Int64?) -> Bool {
        guard first == 0, let last, let total, last == total - 1 else { return false }
        return length == nil || length == total
    }

    /// As the header writes it: `bytes 10-19/100`, `bytes */100`.
    public var description: String {
        let span = first.flatMap { first in last.map { "\(first)-\($0)" } } ?? "*"
        return "bytes \(span)/\(total.map(String.init) ?? "*")"
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
