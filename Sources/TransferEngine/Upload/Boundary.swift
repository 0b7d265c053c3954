/// Multipart boundaries: 128 random bits, never occurring in the form's text.
public enum Boundary {
    public static func make<Generator: RandomNumberGenerator>(avoiding texts: [String], using generator: inout Generator) -> String {
        while true {
            let high = UInt64.random(in: .min ... .max, using: &generator)
            let low = UInt64.random(in: .min ... .max, using: &generator)
            let candidate = "transferd-" + hex(high) + hex(low)
            if !texts.contains(where: { $0.contains(candidate) }) { return candidate }
        }
    }

    public static func make(avoiding texts: [String]) -> String {
        var generator = SystemRandomNumberGenerator()
        return make(avoiding: texts, using: &generator)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
