/// A job's identity: the store's row id, shown to users as a plain integer.
public struct JobID: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }

    public init?(_ text: String) {
        guard let value = Int64(text), NumericLimits.id.contains(value) else { return nil }
        rawValue = value
    }

    public var description: String { String(rawValue) }

    public static func < (lhs: JobID, rhs: JobID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
