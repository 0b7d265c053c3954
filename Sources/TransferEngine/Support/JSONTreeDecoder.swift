import FoundationEssentials

/// Decodes a `Decodable` value from JSON bytes several times faster than FoundationEssentials'
/// `JSONDecoder` for what the control protocol and manifests carry: a chunk of a manifest is
/// hundreds of objects of twenty-odd optional fields, and `JSONDecoder` spent most of its time
/// looking up absent keys (BENCHMARKS.md). The counterpart of `JSONStreamEncoder`.
///
/// It parses the bytes into a small tree (objects as short arrays of keys and values, searched
/// in order) and decodes from that. Whatever it does not take on itself — an escape other than
/// the one-letter ones, a number that is not a plain integer where one is asked for, a
/// duplicate key, a large object, deep nesting, `Data`, `Date`, `URL` or `Decimal` — and every
/// error, is handed to `JSONDecoder`, whose answer (a value or an error) it then gives: it
/// never accepts what `JSONDecoder` refuses, and every error message is `JSONDecoder`'s.
/// Coding paths are not kept (an error is never its own). Thread: a value.
public struct JSONTreeDecoder {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        let state = JSONTreeState()
        let fast = bytes.withContiguousStorageIfAvailable { buffer in Self.decodeFast(type, UnsafeRawBufferPointer(buffer), state) }
        if let value = fast ?? nil { return value }
        // `JSONDecoder` would take `1000.0` or `1e3` for an integer: the protocol does not.
        if let number = state.fractionalInteger {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "\(number) is not a whole number, where one is expected"))
        }
        // Only `\u0000` makes a NUL (the tree refuses raw control bytes), and a NUL cuts a path,
        // URL or header short at the C boundary (`evil\u0000/../../y` passed as `evil`).
        if Self.holdsEscapedNUL(bytes) {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "a string holds a NUL character (\\u0000), which no path, URL, header or name may"))
        }
        return try JSONDecoder().decode(type, from: Data(bytes))
    }

    /// `\u0000` written as an escape (its backslash not itself escaped).
    static func holdsEscapedNUL(_ bytes: some Collection<UInt8>) -> Bool {
        let nul = Array("u0000".utf8)
        var backslashes = 0
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                backslashes += 1
            } else {
                if backslashes % 2 == 1, byte == UInt8(ascii: "u"),
                   bytes[index...].prefix(5).map({ $0 | 0x20 }) == nul.map({ $0 | 0x20 }) {
                    return true
                }
                backslashes = 0
            }
            index = bytes.index(after: index)
        }
        return false
    }

    /// The value, or nil when `JSONDecoder` must decide.
    static func decodeFast<T: Decodable>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer,
                                         _ state: JSONTreeState = JSONTreeState()) -> T? {
        var parser = JSONTreeParser(bytes)
        return parser.document().flatMap { decodeFast(type, tree: $0, state) }
    }

    /// The value of a document already parsed into `tree`, or nil when `JSONDecoder` must decide.
    static func decodeFast<T: Decodable>(_ type: T.Type, tree: JSONTree, _ state: JSONTreeState = JSONTreeState()) -> T? {
        guard let value = try? JSONTreeValueDecoder(tree, state).unwrap(type), !state.unsupported else { return nil }
        return value
    }

    /// The tree of a document, or nil when the tree decoder does not take it on.
    static func tree(_ bytes: some Collection<UInt8>) -> JSONTree? {
        bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONTreeParser(UnsafeRawBufferPointer(buffer))
            return parser.document()
        } ?? nil
    }
}

/// A parsed JSON value. Numbers keep their text (checked against JSON's grammar), read as the
/// type asked for; an object keeps its members in order, keys unique.
enum JSONTree {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONTree])
    case object([(key: String, value: JSONTree)])
}

/// Set when decoding met something `JSONDecoder` must decide (even where a `try?` in an
/// `init(from:)` went on past it).
final class JSONTreeState {
    private(set) var unsupported = false
    /// A number with a fraction or an exponent where an integer is asked for (refused).
    var fractionalInteger: String?

    /// Marks the document as `JSONDecoder`'s and returns the error that stops this decoding.
    func leaveToJSONDecoder() -> DecodingError {
        unsupported = true
        return DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "left to JSONDecoder"))
    }
}

/// RFC 8259's grammar over bytes, strictly; nil for anything malformed or not taken on.
struct JSONTreeParser {
    /// Objects with more members go to `JSONDecoder` (members are found by a search in order).
    static let maxMembers = 64
    static let maxDepth = 256

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// One value and nothing after it but whitespace.
    mutating func document() -> JSONTree? {
        guard let value = value(depth: 0) else { return nil }
        skipSpace()
        return index == bytes.count ? value : nil
    }

    private mutating func value(depth: Int) -> JSONTree? {
        skipSpace()
        guard index < bytes.count, depth < Self.maxDepth else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(JSONTree.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func object(depth: Int) -> JSONTree? {
        index += 1
        var members: [(key: String, value: JSONTree)] = []
        members.reserveCapacity(16)
        skipSpace()
        if take(UInt8(ascii: "}")) { return .object(members) }
        repeat {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string(),
                  !members.contains(where: { Self.same($0.key, key) }), members.count < Self.maxMembers else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")), let value = value(depth: depth + 1) else { return nil }
            members.append((key, value))
            skipSpace()
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? .object(members) : nil
    }

    private mutating func array(depth: Int) -> JSONTree? {
        index += 1
        var elements: [JSONTree] = []
        skipSpace()
        if take(UInt8(ascii: "]")) { return .array(elements) }
        repeat {
            guard let element = value(depth: depth + 1) else { return nil }
            elements.append(element)
            skipSpace()
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? .array(elements) : nil
    }

    /// A string at `index` (its opening quote): valid UTF-8, no raw control character, escapes
    /// of one letter only (`\u` goes to `JSONDecoder`).
    private mutating func string() -> String? {
        index += 1
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                return Self.text(UnsafeRawBufferPointer(rebasing: bytes[start..<index]), ascii: ascii)
            }
            if byte == UInt8(ascii: "\\") { return escapedString(from: start) }
            guard byte >= 0x20 else { return nil }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        return nil
    }

    /// ASCII needs no validation (`String(validating:)` costs some thousand instructions a string).
    private static func text(_ bytes: some Collection<UInt8>, ascii: Bool) -> String? {
        ascii ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }

    /// The rest of a string with an escape in it, from its first byte at `start`.
    private mutating func escapedString(from start: Int) -> String? {
        var text = Array(bytes[start..<index])
        var ascii = !text.contains { $0 >= 0x80 }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return Self.text(text, ascii: ascii)
            case UInt8(ascii: "\\"):
                guard index < bytes.count, let unescaped = Self.unescaped(bytes[index]) else { return nil }
                text.append(unescaped)
                index += 1
            case ..<0x20:
                return nil
            default:
                if byte >= 0x80 { ascii = false }
                text.append(byte)
            }
        }
        return nil
    }

    private static func unescaped(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): letter
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() -> JSONTree? {
        let start = index
        _ = take(UInt8(ascii: "-"))
        if take(UInt8(ascii: "0")) {
            guard index >= bytes.count || !Self.isDigit(bytes[index]) else { return nil }
        } else {
            guard digits() > 0 else { return nil }
        }
        if take(UInt8(ascii: ".")) {
            guard digits() > 0 else { return nil }
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            guard digits() > 0 else { return nil }
        }
        return .number(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        return index - start
    }

    /// Two keys are the same: lengths first (a small string's is at hand; `==` on two unequal
    /// strings calls into the runtime).
    static func same(_ one: String, _ other: String) -> Bool {
        one.utf8.count == other.utf8.count && one == other
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private mutating func literal(_ word: StaticString, _ value: JSONTree) -> JSONTree? {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
              UnsafeRawBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[index..<(index + count)])
        else { return nil }
        index += count
        return value
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }
}
