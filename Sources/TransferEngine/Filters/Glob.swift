/// A wildcard pattern compiled once, with rsync's and rclone's wildcards:
///
/// | pattern | matches |
/// |---|---|
/// | `*` | any run of characters, empty too, except `/` |
/// | `**` | any run of characters, `/` included (a run of three or more stars is `**`) |
/// | `?` | one character except `/` |
/// | `[abc]`, `[a-z]`, `[!a-z]`, `[^a-z]`, `[[:digit:]]` | one character of the class (or, negated, not of it); never `/`. A `]` right after `[` (or `[!`) is a member; `\` escapes inside too |
/// | `\c` | the character `c` itself |
/// | anything else | itself |
///
/// A glob matches a whole string; where a filter rule applies it (anchored, or at the end of a
/// path) is `FilterRule`'s business. Characters are Unicode scalars, so a name carried as a
/// `RawPath` string keeps working: each of its bytes that is not UTF-8 is one character, and a
/// pattern read from the command line or a file the same way matches it.
///
/// Matching never backtracks: the pattern's positions still alive after each character of the
/// text are kept as a set, and each character moves all of them at once, so a match takes at
/// most (text length × pattern length) steps whatever the stars (`*a*a*a*a*b` against 10,000
/// `a`s is 100,000 steps, not 10,000⁴). Pure value. Thread: any.
public struct Glob: Equatable, Sendable, CustomStringConvertible {
    /// One element of a compiled pattern: a position in it is the index of the next token.
    enum Token: Equatable, Sendable {
        case scalar(Unicode.Scalar)
        /// `?`
        case any
        case set(Bracket)
        /// `*`: stays on itself for any character but `/`, or is skipped.
        case star
        /// `**`: stays on itself for any character, or is skipped.
        case globstar

        var isStar: Bool { self == .star || self == .globstar }
    }

    /// `[...]`: ranges of scalars and named ASCII classes, maybe negated.
    struct Bracket: Equatable, Sendable {
        var negated: Bool
        var ranges: [ClosedRange<UInt32>]
        var named: [NamedClass]

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            let member = ranges.contains { $0.contains(scalar.value) } || named.contains { $0.contains(scalar) }
            return member != negated
        }
    }

    /// The POSIX classes `[:name:]` (ASCII, as in the C locale).
    enum NamedClass: String, Equatable, Sendable, CaseIterable {
        case alnum, alpha, blank, cntrl, digit, graph, lower, print, punct, space, upper, xdigit

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            guard scalar.isASCII else { return false }
            let value = scalar.value
            let digit = (0x30...0x39).contains(value)
            let upper = (0x41...0x5A).contains(value)
            let lower = (0x61...0x7A).contains(value)
            let graph = (0x21...0x7E).contains(value)
            switch self {
            case .alnum: return digit || upper || lower
            case .alpha: return upper || lower
            case .blank: return value == 0x20 || value == 0x09
            case .cntrl: return value < 0x20 || value == 0x7F
            case .digit: return digit
            case .graph: return graph
            case .lower: return lower
            case .print: return graph || value == 0x20
            case .punct: return graph && !(digit || upper || lower)
            case .space: return value == 0x20 || (0x09...0x0D).contains(value)
            case .upper: return upper
            case .xdigit: return digit || (0x41...0x46).contains(value) || (0x61...0x66).contains(value)
            }
        }
    }

    /// The pattern as written.
    public let pattern: String
    let tokens: [Token]
    /// The positions of `*` and `**`, ascending: where a position also stands on the next one.
    private let stars: [Int]

    /// Compiles `pattern`; a class without its `]`, a `\` at the end, an unknown `[:name:]` or a
    /// range that runs backwards is refused.
    public init(_ pattern: String) throws(GlobSyntaxError) {
        self.pattern = pattern
        let tokens = try Self.compile(Array(pattern.unicodeScalars), pattern: pattern)
        self.tokens = tokens
        stars = tokens.indices.filter { tokens[$0].isStar }
    }

    public var description: String { pattern }

    /// Whether the glob matches all of `text`; with `anchored: false`, whether it matches `text`
    /// from its start or from just after any `/` in it, to its end (`b/c` in `a/b/c`, not in `a/xb/c`).
    public func matches(_ text: String, anchored: Bool = true) -> Bool {
        var current = Positions(count: tokens.count + 1)
        var next = current
        current.insert(0)
        close(&current)
        for scalar in text.unicodeScalars {
            next.removeAll()
            current.forEach { position in
                guard position < tokens.count else { return }
                switch tokens[position] {
                case .scalar(let wanted): if scalar == wanted { next.insert(position + 1) }
                case .any: if scalar != "/" { next.insert(position + 1) }
                case .set(let set): if scalar != "/", set.contains(scalar) { next.insert(position + 1) }
                case .star: if scalar != "/" { next.insert(position) }
                case .globstar: next.insert(position)
                }
            }
            if !anchored, scalar == "/" { next.insert(0) }  // a component starts after each `/`
            close(&next)
            swap(&current, &next)
            if anchored, current.isEmpty { return false }
        }
        return current.contains(tokens.count)
    }

    /// A star may match nothing: a position on one also stands after it (ascending, so that a
    /// star after a star is passed too).
    private func close(_ positions: inout Positions) {
        for star in stars where positions.contains(star) { positions.insert(star + 1) }
    }

    // MARK: Compiling

    private static func compile(_ scalars: [Unicode.Scalar], pattern: String) throws(GlobSyntaxError) -> [Token] {
        var tokens: [Token] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "*":
                var end = index
                while end < scalars.count, scalars[end] == "*" { end += 1 }
                tokens.append(end - index == 1 ? .star : .globstar)
                index = end
            case "?":
                tokens.append(.any)
                index += 1
            case "[":
                let (set, end) = try characterSet(scalars, from: index, pattern: pattern)
                tokens.append(.set(set))
                index = end
            case "\\":
                guard index + 1 < scalars.count else {
                    throw GlobSyntaxError(pattern: pattern, "a '\\' at the end escapes nothing (write '\\\\' for a backslash)")
                }
                tokens.append(.scalar(scalars[index + 1]))
                index += 2
            default:
                tokens.append(.scalar(scalar))
                index += 1
            }
        }
        return tokens
    }

    /// The class that starts with the `[` at `start`, and the index after its `]`.
    private static func characterSet(_ scalars: [Unicode.Scalar], from start: Int,
                                     pattern: String) throws(GlobSyntaxError) -> (Bracket, Int) {
        var set = Bracket(negated: false, ranges: [], named: [])
        var index = start + 1
        if index < scalars.count, scalars[index] == "!" || scalars[index] == "^" {
            set.negated = true
            index += 1
        }
        let first = index
        while index < scalars.count {
            var scalar = scalars[index]
            if scalar == "]", index > first { return (set, index + 1) }
            if scalar == "[", index + 1 < scalars.count, scalars[index + 1] == ":" {
                guard let close = closingColon(scalars, after: index + 2) else {
                    throw GlobSyntaxError(pattern: pattern, "'[:' starts a class name that has no ':]'")
                }
                let name = String(String.UnicodeScalarView(scalars[(index + 2)..<close]))
                guard let named = NamedClass(rawValue: name) else {
                    throw GlobSyntaxError(pattern: pattern, "unknown character class '[:\(name):]' (known: "
                        + NamedClass.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                }
                set.named.append(named)
                index = close + 2
                continue
            }
            if scalar == "\\" {
                guard index + 1 < scalars.count else { break }
                index += 1
                scalar = scalars[index]
            }
            index += 1
            // `a-z`; a `-` first or last in the class is itself.
            if index + 1 < scalars.count, scalars[index] == "-", scalars[index + 1] != "]" {
                var upper = scalars[index + 1]
                index += 2
                if upper == "\\" {
                    guard index < scalars.count else { break }
                    upper = scalars[index]
                    index += 1
                }
                guard scalar.value <= upper.value else {
                    throw GlobSyntaxError(pattern: pattern, "the range '\(scalar)-\(upper)' runs backwards")
                }
                set.ranges.append(scalar.value...upper.value)
            } else {
                set.ranges.append(scalar.value...scalar.value)
            }
        }
        throw GlobSyntaxError(pattern: pattern, "'[' starts a character class that has no ']' (write '\\[' for a bracket)")
    }

    /// The index of the `:` of the first `:]` at or after `index`.
    private static func closingColon(_ scalars: [Unicode.Scalar], after index: Int) -> Int? {
        var colon = index
        while colon + 1 < scalars.count {
            if scalars[colon] == ":", scalars[colon + 1] == "]" { return colon }
            colon += 1
        }
        return nil
    }
}

/// A pattern that cannot be compiled: `message` names it and says what is wrong.
public struct GlobSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    /// What is wrong, without the pattern.
    public var reason: String

    init(pattern: String, _ reason: String) {
        message = "bad pattern '\(pattern)': \(reason)"
        self.reason = reason
    }

    init(_ message: String) {
        self.message = message
        reason = message
    }

    public var description: String { message }
}

/// A set of small integers (a glob's positions), as bits; `removeAll` keeps the storage.
struct Positions: Equatable, Sendable {
    private var words: [UInt64]

    init(count: Int) { words = Array(repeating: 0, count: (count + 63) / 64) }

    var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    func contains(_ position: Int) -> Bool { words[position >> 6] & (1 << UInt64(position & 63)) != 0 }

    mutating func insert(_ position: Int) { words[position >> 6] |= 1 << UInt64(position & 63) }

    mutating func removeAll() {
        for index in words.indices { words[index] = 0 }
    }

    /// Calls `body` with each member, ascending.
    func forEach(_ body: (Int) -> Void) {
        for (index, word) in words.enumerated() {
            var bits = word
            while bits != 0 {
                body(index << 6 + bits.trailingZeroBitCount)
                bits &= bits - 1
            }
        }
    }
}
