/// One line saying why JSON did not decode, without Swift's debug dump.
public enum DecodingSummary {
    public static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? context.debugDescription
                : "invalid value at '\(path(context.codingPath))': \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, let context):
            return "missing field '\(path(context.codingPath + [key]))'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at '\(path(context.codingPath))'"
        default:
            return "invalid JSON"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
