/// Consecutive job ids, first to last, both included: how `wait` with `brief` and `ranges`
/// answers the jobs that completed. A batch's jobs are queued with consecutive ids, so a batch
/// of thousands that all completed is one range rather than thousands of outcomes to encode
/// and decode. On the wire `[first, last]`. Thread: a value; any.
public struct JobIDRange: Codable, Equatable, Sendable {
    public var first: JobID
    public var last: JobID

    public init(first: JobID, last: JobID) {
        self.first = first
        self.last = last
    }

    /// The fewest ranges that hold exactly `ids`, in ascending order (an id named twice counts once).
    public static func covering(_ ids: [JobID]) -> [JobIDRange] {
        var ranges: [JobIDRange] = []
        for id in ids.sorted() {
            if let last = ranges.last?.last, id.rawValue <= last.rawValue.saturatingAdd(1) {
                if id > last { ranges[ranges.count - 1].last = id }
            } else {
                ranges.append(JobIDRange(first: id, last: id))
            }
        }
        return ranges
    }

    /// Every id of the range, in ascending order.
    public var ids: [JobID] {
        guard first <= last else { return [] }
        return (first.rawValue...last.rawValue).map(JobID.init(rawValue:))
    }

    public init(from decoder: Decoder) throws {
        var container = try decoder.unkeyedContainer()
        first = try container.decode(JobID.self)
        last = try container.decode(JobID.self)
        guard container.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a range is [first, last]")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(first)
        try container.encode(last)
    }
}
