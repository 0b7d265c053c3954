/// A bandwidth in bytes per second, parsed from `512K`, `4M`, `1.5M`, `0` / `off` (unlimited).
public enum Rate {
    public struct ParseError: Error, Equatable, Sendable {
        public var text: String
        /// A number, but outside `NumericLimits.rate`.
        public var outOfRange = false

        public var message: String {
            guard outOfRange else {
                return "invalid rate '\(text)': use a number of bytes per second with an optional K, M or G suffix, or 'off'"
            }
            let most = NumericLimits.rate.range.upperBound
            return "invalid rate '\(text)': a limit must be \(NumericLimits.rate.bounds) (\(most >> 30)G), or 'off'"
        }
    }

    /// Bytes per second, or nil for unlimited.
    public static func parse(_ text: String) throws(ParseError) -> Int64? {
        let trimmed = text.trimmingSpaces
        if trimmed == "off" { return nil }
        guard let (value, bytes) = ByteCount.scaled(trimmed) else { throw ParseError(text: text) }
        if value == 0 { return nil }
        // A fraction of a byte is not unlimited, and too large a rate is refused, not wrapped.
        guard let limit = Int64(exactly: bytes), NumericLimits.rate.contains(limit) else {
            throw ParseError(text: text, outOfRange: true)
        }
        return limit
    }

    /// `4.0 MiB/s` style text.
    public static func describe(_ bytesPerSecond: Int64?) -> String {
        guard let bytesPerSecond else { return "unlimited" }
        return ByteCount.describe(bytesPerSecond) + "/s"
    }
}

/// Sizes in powers of 1024: `10M` parsed, `10.0 MiB` shown.
public enum ByteCount {
    public struct ParseError: Error, Equatable, Sendable {
        public var text: String
        public var message: String { "invalid size '\(text)': use a number of bytes with an optional K, M or G suffix" }
    }

    /// A number of bytes such as `4096`, `512K`, `1.5G`, within `NumericLimits.bytes`.
    public static func parse(_ text: String) throws(ParseError) -> Int64 {
        guard let (_, bytes) = scaled(text.trimmingSpaces), let count = Int64(exactly: bytes),
              NumericLimits.bytes.contains(count) else { throw ParseError(text: text) }
        return count
    }

    /// A number with an optional K, M or G suffix: the number as written, and the bytes it
    /// means (rounded, possibly too large for any integer); nil for anything else.
    static func scaled(_ text: String) -> (value: Double, bytes: Double)? {
        var number = Substring(text)
        var multiplier = 1.0
        if let last = number.last, let scale = ["K": 1024.0, "M": 1024.0 * 1024, "G": 1024.0 * 1024 * 1024][last.uppercased()] {
            multiplier = scale
            number = number.dropLast()
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }),
              let value = Double(number), value.isFinite, value >= 0
        else { return nil }
        return (value, (value * multiplier).rounded())
    }

    public static func describe(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let tenths = (value * 10).rounded() / 10
        return "\(tenths) \(units[unit])"
    }
}

extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
