/// A file's modification time (nanoseconds since the epoch, as `st_mtim` gives it) written as
/// ISO 8601 in UTC with all nine fractional digits — `2026-11-30T21:03:11.123456789Z` — so
/// that JSON shows a time like every other, and reads back to the same nanosecond (the
/// source-changed check compares exactly). Pure; unit-tested.
enum FileTime {
    static func iso8601(nanoseconds: Int64) -> String {
        let seconds = nanoseconds.floorDivided(by: 1_000_000_000)
        let fraction = nanoseconds &- seconds &* 1_000_000_000  // wraps back into 0..<1e9 at the extremes
        let days = seconds.floorDivided(by: 86_400)
        let time = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let digits = String(fraction)
        return "\(String(repeating: "0", count: max(0, 4 - String(year).count)))\(year)-\(two(month))-\(two(day))"
            + "T\(two(time / 3600)):\(two(time % 3600 / 60)):\(two(time % 60))."
            + String(repeating: "0", count: 9 - digits.count) + digits + "Z"
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (up to nine fractional digits); nil for anything else.
    static func nanoseconds(iso8601 text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count, !range.isEmpty else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, UInt8)] = [(4, UInt8(ascii: "-")), (7, UInt8(ascii: "-")), (10, UInt8(ascii: "T")),
                                          (13, UInt8(ascii: ":")), (16, UInt8(ascii: ":"))]
        guard separators.allSatisfy({ bytes[$0.0] == $0.1 }),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...days(inMonth: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        var fraction: Int64 = 0
        if bytes.count > 20 {
            let digits = bytes.count - 21
            guard bytes[19] == UInt8(ascii: "."), (1...9).contains(digits), let value = number(20..<(bytes.count - 1)) else {
                return nil
            }
            fraction = value
            for _ in digits..<9 { fraction *= 10 }
        } else if bytes.count != 20 {
            return nil
        }
        let seconds = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        // In 64 bits, wrapping: the true value fits exactly when the wrapped one has its sign
        // (seconds before the epoch can overflow alone and come back with the fraction).
        let wrapped = seconds &* 1_000_000_000 &+ fraction
        guard (wrapped < 0) == (seconds < 0), seconds.magnitude <= UInt64(Int64.max / 1_000_000_000) + 1 else { return nil }
        return wrapped
    }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian calendar).

    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func days(inMonth month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

private extension Int64 {
    /// Division rounding toward negative infinity (times before 1970 are negative).
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
