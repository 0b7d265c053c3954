/// A file's modification time (nanoseconds since the epoch, as `st_mtim` gives it) written as
/// ISO 8601 in UTC with all nine fractional digits — `2026-11-30T21:03:11.123456789Z` — so
/// that JSON shows a time like every other, and reads back to the same nanosecond (the
/// source-changed check compares exactly). Pure; unit-tested.
enum FileTime {
    static func iso8601(nanoseconds: Int64) -> String {
        let seconds = nanoseconds.floorDivided(by: 1_000_000_000)
        let fraction = nanoseconds &- seconds &* 1_000_000_000  // wraps back into 0..<1e9 at the extremes
        return ISO8601.format(seconds: seconds, fraction: fraction, digits: 9)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (up to nine fractional digits); nil for anything else,
    /// and for a time nanoseconds in 64 bits cannot hold.
    static func nanoseconds(iso8601 text: String) -> Int64? {
        guard let (seconds, fraction) = ISO8601.parse(text) else { return nil }
        // In 64 bits, wrapping: the true value fits exactly when the wrapped one has its sign
        // (seconds before the epoch can overflow alone and come back with the fraction).
        let wrapped = seconds &* 1_000_000_000 &+ fraction
        guard (wrapped < 0) == (seconds < 0), seconds.magnitude <= UInt64(Int64.max / 1_000_000_000) + 1 else { return nil }
        return wrapped
    }
}
