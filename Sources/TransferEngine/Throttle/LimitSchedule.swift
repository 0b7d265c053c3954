/// A bandwidth timetable such as `Mon-Fri 08:00-18:00 down=1M up=512K; * off`: entries
/// separated by `;`, the first that matches the local time wins. An entry is optional days
/// (`Mon-Fri`, `Sat,Sun`, `*`), an optional time range (`HH:MM-HH:MM`, which may wrap past
/// midnight), then `off` or `down=RATE` / `up=RATE`. A direction an entry leaves out, or a time
/// no entry matches, uses the daemon's own limits. Pure; unit-tested.
public struct LimitSchedule: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        /// Mon = 0 ... Sun = 6.
        public var days: Set<Int>
        /// Minutes after midnight, start inclusive, end exclusive; nil for all day.
        public var window: Window?
        /// nil: this entry leaves the direction alone; .some(nil): unlimited.
        public var down: Int64??
        public var up: Int64??
        /// The entry as written, for `stats`.
        public var text: String

        func matches(_ time: LocalTime) -> Bool {
            guard let window else { return days.contains(time.weekday) }
            if window.start < window.end {
                return days.contains(time.weekday) && time.minute >= window.start && time.minute < window.end
            }
            // 22:00-06:00: from 22:00 on a listed day to 06:00 the next morning.
            if time.minute >= window.start { return days.contains(time.weekday) }
            return time.minute < window.end && days.contains((time.weekday + 6) % 7)
        }
    }

    /// `HH:MM-HH:MM` in minutes after midnight; `end < start` wraps past midnight.
    public struct Window: Equatable, Sendable {
        public var start: Int
        public var end: Int
    }

    /// A moment in local time: the weekday (Mon = 0) and the minute of the day.
    public struct LocalTime: Equatable, Sendable {
        public var weekday: Int
        public var minute: Int

        public init(weekday: Int, minute: Int) {
            self.weekday = weekday
            self.minute = minute
        }
    }

    public struct ParseError: Error, Equatable, Sendable {
        public var message: String
    }

    public var entries: [Entry]
    public var text: String

    public func active(at time: LocalTime) -> Entry? {
        entries.first { $0.matches(time) }
    }

    static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    public static func parse(_ text: String) throws(ParseError) -> LimitSchedule {
        var entries: [Entry] = []
        for (index, rawEntry) in text.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
            let entryText = String(rawEntry).trimmingSpaces
            guard !entryText.isEmpty else { continue }
            entries.append(try parseEntry(entryText, number: index + 1))
        }
        guard !entries.isEmpty else { throw ParseError(message: "invalid timetable: no entries") }
        return LimitSchedule(entries: entries, text: text)
    }

    private static func parseEntry(_ text: String, number: Int) throws(ParseError) -> Entry {
        func fail(_ token: Substring, _ why: String) -> ParseError {
            ParseError(message: "invalid timetable entry \(number) ('\(text)'): \(why) at '\(token)'")
        }
        var entry = Entry(days: Set(0..<7), window: nil, down: nil, up: nil, text: text)
        var sawLimit = false
        for token in text.split(separator: " ") {
            if token == "*" { continue }
            if token == "off" {
                entry.down = .some(nil)
                entry.up = .some(nil)
                sawLimit = true
            } else if let equals = token.firstIndex(of: "=") {
                let key = token[..<equals]
                let rate: Int64?
                do { rate = try Rate.parse(String(token[token.index(after: equals)...])) } catch {
                    throw fail(token, "bad rate")
                }
                switch key {
                case "down": entry.down = .some(rate)
                case "up": entry.up = .some(rate)
                default: throw fail(token, "expected down= or up=")
                }
                sawLimit = true
            } else if token.first?.isNumber == true {
                guard let window = parseWindow(token) else { throw fail(token, "expected HH:MM-HH:MM") }
                entry.window = window
            } else {
                guard let days = parseDays(token) else { throw fail(token, "expected days like Mon-Fri or Sat,Sun") }
                entry.days = days
            }
        }
        guard sawLimit else { throw fail(Substring(text), "expected 'off', down=RATE or up=RATE") }
        return entry
    }

    private static func parseWindow(_ token: Substring) -> Window? {
        let parts = token.split(separator: "-")
        guard parts.count == 2, let start = minute(parts[0]), let end = minute(parts[1]), start != end else { return nil }
        return Window(start: start, end: end)
    }

    private static func minute(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
              (0...24).contains(hour), (0..<60).contains(minute), hour * 60 + minute <= 24 * 60 else { return nil }
        return hour * 60 + minute
    }

    private static func parseDays(_ token: Substring) -> Set<Int>? {
        var days = Set<Int>()
        for piece in token.split(separator: ",") {
            let bounds = piece.split(separator: "-")
            let indices = bounds.map { dayNames.firstIndex(of: $0.lowercased()) }
            guard (1...2).contains(bounds.count), let first = indices.first ?? nil, let last = indices.last ?? nil else {
                return nil
            }
            var day = first
            while true {
                days.insert(day)
                if day == last { break }
                day = (day + 1) % 7
            }
        }
        return days.isEmpty ? nil : days
    }
}
