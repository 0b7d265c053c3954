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

    public var iso8601: String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(rawValue: rawValue + milliseconds)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        let fractional = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        guard let date = fractional ?? (try? Date(text, strategy: Date.ISO8601FormatStyle())) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time: \(text)")
        }
        self.rawValue = Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}
