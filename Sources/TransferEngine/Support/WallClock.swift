#if canImport(Glibc)
import Glibc
#endif

/// The daemon's notion of the date and time of day, for what depends on them: timetables.
/// The system clock unless a test starts it at a fixed instant (`transferd --test-clock`), from
/// which it runs on at the real pace, so a timetable's entry in force does not depend on the day
/// the tests run. The local time zone is the process's (`TZ` applies).
public struct WallClock: Sendable {
    /// How far this clock is ahead of the system's.
    private let offsetMilliseconds: Int64

    public static let system = WallClock(offsetMilliseconds: 0)

    private init(offsetMilliseconds: Int64) {
        self.offsetMilliseconds = offsetMilliseconds
    }

    /// A clock that reads `instant` now and runs on from there.
    public init(startingAt instant: Timestamp, systemNow: Timestamp = .now) {
        self.init(offsetMilliseconds: instant.rawValue &- systemNow.rawValue)
    }

    public var now: Timestamp { Timestamp.now.adding(milliseconds: offsetMilliseconds) }

    /// The weekday and minute of the day now, in the local time zone.
    public var localTime: LimitSchedule.LocalTime { LimitSchedule.LocalTime(local: now) }
}

extension LimitSchedule.LocalTime {
    /// The local time at `instant` in a zone `utcOffsetSeconds` east of UTC. Pure.
    public init(at instant: Timestamp, utcOffsetSeconds: Int) {
        let seconds = instant.rawValue.floorDivided(by: 1000) + Int64(utcOffsetSeconds)
        let day = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - day * 86_400
        // 1970-01-01 was a Thursday (Mon = 0, so Thursday = 3).
        let weekday = Int(((day + 3) % 7 + 7) % 7)
        self.init(weekday: weekday, minute: Int(secondOfDay / 60))
    }

    /// The local time at `instant` in the process's time zone, with its daylight-saving rule
    /// for that instant.
    public init(local instant: Timestamp) {
        var seconds = time_t(instant.rawValue.floorDivided(by: 1000))
        var parts = tm()
        localtime_r(&seconds, &parts)
        self.init(at: instant, utcOffsetSeconds: Int(parts.tm_gmtoff))
    }
}
