/// Encodes an `Encodable` value straight into compact JSON bytes, without the tree of values
/// FoundationEssentials' `JSONEncoder` builds first: a `wait` answer of 2,000 jobs was 87% of
/// its time in that encoder. Keys come out in the order they are encoded, and `/` is not
/// escaped; any JSON decoder reads the result as `JSONEncoder`'s.
///
/// The one rule it relies on: a container is filled before its parent goes on (a nested
/// container is finished before the next key of the one it is in), which every `encode(to:)`
/// — written or synthesized — does. Coding paths are not kept (building one per value cost
/// as much as the rest); an error says what value failed, not where. `pretty` writes each
/// element on its own line, indented by two spaces a level, keys as `"key": value` (what
/// people and `jq` print). Thread: a value; one call at a time.
public struct JSONStreamEncoder {
    public var pretty: Bool

    public init(pretty: Bool = false) {
        self.pretty = pretty
    }

    public func encode(_ value: some Encodable) throws -> [UInt8] {
        let stream = JSONStream(pretty: pretty)
        try stream.write(value)
        return stream.bytes
    }
}

/// The bytes written so far and the containers still open, innermost last. Its arrays are
/// touched by one call at a time, so their exclusivity is not checked at run time (the checks
/// cost more than the appends they guarded).
final class JSONStream {
    @exclusivity(unchecked) private(set) var bytes: [UInt8] = []
    /// Each open container's closing byte and how many elements it has.
    @exclusivity(unchecked) private var open: [(closer: UInt8, count: Int)] = []
    private let pretty: Bool

    init(pretty: Bool = false) {
        self.pretty = pretty
        bytes.reserveCapacity(4096)
    }

    var depth: Int { open.count }

    /// Whether the container open at `depth` (1: the outermost) is an object.
    func isObject(at depth: Int) -> Bool {
        depth <= open.count && open[depth - 1].closer == UInt8(ascii: "}")
    }

    /// Opens a container (`{` or `[`); returns its depth, by which its elements are written.
    func openContainer(_ opener: UInt8, _ closer: UInt8) -> Int {
        bytes.append(opener)
        open.append((closer, 0))
        return open.count
    }

    /// Closes the containers deeper than `depth`.
    func close(downTo depth: Int) {
        while open.count > depth {
            let container = open.removeLast()
            if pretty, container.count > 0 { newline(indent: open.count) }
            bytes.append(container.closer)
        }
    }

    /// Starts the next element of the container at `depth`: closes what a previous element
    /// left open, and separates it from that element.
    func element(of depth: Int) {
        close(downTo: depth)
        if open[depth - 1].count > 0 { bytes.append(UInt8(ascii: ",")) }
        open[depth - 1].count += 1
        if pretty { newline(indent: depth) }
    }

    private func newline(indent level: Int) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    func key(_ key: some CodingKey) {
        self.key(named: key.stringValue)
    }

    func key(named name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
    }

    /// `"name":` as the next member of the object open at `depth`, its value to follow: for a
    /// type written by hand, without `Encodable`'s containers.
    func member(_ name: String, of depth: Int) {
        element(of: depth)
        key(named: name)
    }

    func null() { bytes.append(contentsOf: "null".utf8) }
    func bool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    func integer(_ value: some BinaryInteger) { bytes.append(contentsOf: String(value).utf8) }

    func double(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) is not a JSON number"))
        }
        if let thousandths = Self.thousandths(value) { return decimal(thousandths) }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// `value` as a whole number of thousandths, when it is one well within a double's
    /// precision: most numbers written are whole or thousandths (libcurl's microseconds in
    /// milliseconds, five with every attempt's end), and `description`'s shortest digits cost
    /// some 2,000 instructions a number. Below 10¹² a double is the nearest to exactly one such
    /// decimal, and no shorter decimal is as near, so these digits are `description`'s.
    static func thousandths(_ value: Double) -> Int64? {
        let scaled = (value * 1000).rounded()
        guard scaled.magnitude < 1e15, scaled / 1000 == value, value != 0 || value.sign == .plus else { return nil }
        return Int64(scaled)
    }

    /// Writes `thousandths` / 1000 in decimal, without trailing zeros (nor a point for a whole).
    private func decimal(_ thousandths: Int64) {
        let (whole, fraction) = thousandths.magnitude.quotientAndRemainder(dividingBy: 1000)
        if thousandths < 0 { bytes.append(UInt8(ascii: "-")) }
        bytes.append(contentsOf: String(whole).utf8)
        guard fraction > 0 else { return }
        bytes.append(UInt8(ascii: "."))
        var digits = fraction
        var divisor: UInt64 = 100
        while digits > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(digits / divisor))
            digits %= divisor
            divisor /= 10
        }
    }

    /// A JSON string: runs of bytes that need no escape are appended whole (each append to a
    /// class's array is an exclusivity check).
    func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            var run = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"")
                || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
                escape(byte)
                run = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
            bytes.append(UInt8(ascii: "\""))
        }
    }

    private func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
        case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
        case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
        case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
        case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                      hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }

    /// Writes one value: a primitive directly, anything else through its `encode(to:)`, whose
    /// containers are closed when it returns (nothing at all as `{}`, as JSONEncoder does).
    func write<T: Encodable>(_ value: T) throws {
        // By type, not by cast: a dynamic cast per value cost more than writing it.
        if T.self == String.self { return string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return integer(unsafeBitCast(value, to: Int.self)) }
        if T.self == Int64.self { return integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Bool.self { return bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Double.self { return try double(unsafeBitCast(value, to: Double.self)) }
        let depth = self.depth
        let start = bytes.count
        try value.encode(to: StreamEncoder(stream: self))
        if bytes.count == start { bytes.append(contentsOf: "{}".utf8) }
        close(downTo: depth)
    }
}
