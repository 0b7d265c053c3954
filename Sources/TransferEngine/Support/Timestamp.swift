import FoundationEssentials

/// A wall-clock instant in Unix milliseconds: what the store keeps and JSON prints as ISO 8601.
public struct Timestamp: RawRepresentable, Hashable, Comparable, Codable, Sendable {
    public var rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }

    public init(milliseconds: Int64) { self.rawValue = milliseconds }

    public static var now: Timestamp {
        Timestamp(rawValue: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
    }

    public var date: Date { Date(timeIntervalSince1970: Double(rawValue) / 1000) }

    /// `2026-11-28T12:00:00.000Z`: to the millisecond, in UTC.
    public var iso8601: String {
        let seconds = rawValue.floorDivided(by: 1000)
        return ISO8601.format(seconds: seconds, fraction: rawValue - seconds * 1000, digits: 3)
    }

    /// Saturates: a huge delay gives the far future, never a trap.
    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(rawValue: rawValue.saturatingAdd(milliseconds))
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `2026-11-28T12:00:00Z`, with or without fractional seconds (up to nine digits, rounded to
    /// the millisecond), read by hand; what else Foundation's ISO 8601 parser reads (an offset
    /// instead of `Z`) it reads; nil for anything else.
    public init?(iso8601 text: String) {
        if let (seconds, nanoseconds) = ISO8601.parse(text) {
            let milliseconds = nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 >= 500_000 ? 1 : 0)
            self.rawValue = seconds * 1000 + milliseconds
            return
        }
        let fractional = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        guard let date = fractional ?? (try? Date(text, strategy: Date.ISO8601FormatStyle())) else { return nil }
        self.rawValue = Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let timestamp = Timestamp(iso8601: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time: \(text)")
        }
        self = timestamp
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}
