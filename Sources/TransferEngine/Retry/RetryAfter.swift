/// `Retry-After`: delay-seconds or an HTTP-date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`),
/// as a wait in milliseconds, at most `NumericLimits.timeoutSeconds` (a server's number is
/// held to it, never multiplied past Int64). Pure.
public enum RetryAfter {
    public static func milliseconds(_ value: String, now: Timestamp = .now) -> Int64? {
        let text = value.trimmingSpaces
        let longest = Int64(NumericLimits.timeoutSeconds.range.upperBound) * 1000
        if let seconds = Int64(text), seconds >= 0 { return min(seconds, longest / 1000) * 1000 }
        guard let due = httpDate(text) else { return nil }
        return min(longest, max(0, due * 1000 - now.rawValue))
    }

    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Seconds since the epoch of an IMF-fixdate (a four-digit year, every field in its range).
    static func httpDate(_ text: String) -> Int64? {
        let words = text.split(separator: " ")
        guard words.count == 6, words[5] == "GMT", let day = Int64(words[1]), (1...31).contains(day),
              let month = months.firstIndex(of: words[2].lowercased()), let year = Int64(words[3]),
              (0...9999).contains(year) else { return nil }
        let clock = words[4].split(separator: ":").compactMap { Int64($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        return daysSinceEpoch(year: year, month: Int64(month + 1), day: day) * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
