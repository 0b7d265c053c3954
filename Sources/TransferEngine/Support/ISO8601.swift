/// Times in UTC as ISO 8601, `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, written and read by hand:
/// Foundation's `ISO8601FormatStyle` works out a calendar for every date, and the daemon writes
/// a time with each log line and each job or event it answers in JSON (on the loop thread: 1 %
/// of its samples in a batch of small files). Proleptic Gregorian calendar; pure, unit-tested
/// against Foundation.
enum ISO8601 {
    /// `seconds` since the epoch, and `fraction` of a second written in `digits` digits (0: no
    /// fraction; `fraction` is below 10^`digits`).
    static func format(seconds: Int64, fraction: Int64, digits: Int) -> String {
        let days = seconds.floorDivided(by: 86_400)
        let time = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let yearText = String(year.magnitude)
        let yearWidth = (year < 0 ? 1 : 0) + max(4, yearText.utf8.count)
        let length = yearWidth + 16 + (digits > 0 ? digits + 1 : 0)
        return String(unsafeUninitializedCapacity: length) { buffer in
            var index = 0
            func put(_ byte: UInt8) {
                buffer[index] = byte
                index += 1
            }
            func put(_ value: Int64, width: Int) {
                var value = value
                for position in stride(from: index + width - 1, through: index, by: -1) {
                    buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                index += width
            }
            if year < 0 { put(UInt8(ascii: "-")) }
            for _ in yearText.utf8.count..<max(4, yearText.utf8.count) { put(UInt8(ascii: "0")) }
            for byte in yearText.utf8 { put(byte) }
            put(UInt8(ascii: "-"))
            put(month, width: 2)
            put(UInt8(ascii: "-"))
            put(day, width: 2)
            put(UInt8(ascii: "T"))
            put(time / 3600, width: 2)
            put(UInt8(ascii: ":"))
            put(time % 3600 / 60, width: 2)
            put(UInt8(ascii: ":"))
            put(time % 60, width: 2)
            if digits > 0 {
                put(UInt8(ascii: "."))
                put(fraction, width: digits)
            }
            put(UInt8(ascii: "Z"))
            return index
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (up to nine fractional digits): seconds since the epoch
    /// and nanoseconds; nil for anything else.
    static func parse(_ text: String) -> (seconds: Int64, nanoseconds: Int64)? {
        var text = text
        return text.withUTF8 { bytes in
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
            guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
                  bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
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
            return (days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second, fraction)
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.

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
