/// Splits a byte stream into newline-terminated lines, refusing a line longer than `limit`.
/// Pure; unit-tested.
public struct LineFramer: Sendable {
    public enum Output: Equatable, Sendable {
        case line([UInt8])
        /// More than `limit` bytes arrived without a newline: the stream cannot be trusted further.
        case tooLong
    }

    public let limit: Int
    private static let keptCapacity = 64 * 1024
    private var pending: [UInt8] = []

    public init(limit: Int) { self.limit = limit }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [Output] {
        var outputs: [Output] = []
        var start = 0
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "\n") {
            pending.append(contentsOf: bytes[start..<index])
            start = index + 1
            if pending.count > limit {
                outputs.append(.tooLong)
                pending.removeAll()
                return outputs
            }
            outputs.append(.line(pending))
            // A connection that sent one long line does not keep its buffer.
            pending.removeAll(keepingCapacity: pending.capacity <= Self.keptCapacity)
        }
        pending.append(contentsOf: bytes[start...])
        if pending.count > limit {
            outputs.append(.tooLong)
            pending.removeAll()
        }
        return outputs
    }
}
