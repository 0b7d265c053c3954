/// How long ago something happened, as written on a command line: whole numbers with a unit,
/// `90s`, `30m`, `12h`, `7d`, `2w`, or several of them (`1d12h`). `prune --older-than` and
/// `transferd --keep-history` take one. A bare number is refused: `7` could be days or seconds.
/// Pure. Thread: a value; any.
public struct Age: Equatable, Hashable, Sendable, CustomStringConvertible {
    public let seconds: Int64

    /// Within `NumericLimits.ageSeconds`.
    public init(seconds: Int64) throws(OutOfRange) {
        self.seconds = try NumericLimits.ageSeconds.check(seconds, "the age")
    }

    private init(checked seconds: Int64) { self.seconds = seconds }

    public var milliseconds: Int64 { seconds.saturatingMultiply(1000) }

    /// The largest unit that divides it: `7d`, `36h`, `90s`.
    public var description: String {
        for (unit, size) in Self.units.reversed() where seconds >= size && seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    /// Seconds per unit, smallest first.
    private static let units: [(Character, Int64)] = [("s", 1), ("m", 60), ("h", 3600), ("d", 86_400), ("w", 604_800)]

    public struct ParseError: Error, Equatable, Sendable {
        public var text: String
        /// The option or field it was given for, e.g. `--older-than`.
        public var field: String
        /// A well-formed age, but longer than `NumericLimits.ageSeconds` allows.
        public var tooLong = false

        public var message: String {
            let most = Age(checked: NumericLimits.ageSeconds.range.upperBound)
            if tooLong { return "\(field) must be at most \(most), got '\(text)'" }
            return "\(field) needs an age like 7d, 12h, 30m, 90s or 1d12h (s, m, h, d or w after a whole number), got '\(text)'"
        }
    }

    /// `text` (for `field`, which messages name) as an age.
    public static func parse(_ text: String, _ field: String) throws(ParseError) -> Age {
        var total: Int64 = 0
        var digits = ""
        var sawUnit = false
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            guard let size = units.first(where: { $0.0 == character })?.1, !digits.isEmpty else {
                throw ParseError(text: text, field: field)
            }
            // Digits beyond Int64 and sums beyond the limit are too long, never wrapped.
            guard let count = Int64(digits) else { throw ParseError(text: text, field: field, tooLong: true) }
            total = total.saturatingAdd(count.saturatingMultiply(size))
            digits = ""
            sawUnit = true
        }
        guard sawUnit, digits.isEmpty else { throw ParseError(text: text, field: field) }
        guard NumericLimits.ageSeconds.contains(total) else { throw ParseError(text: text, field: field, tooLong: true) }
        return Age(checked: total)
    }
}
