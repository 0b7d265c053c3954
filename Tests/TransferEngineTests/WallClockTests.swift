import Testing
@testable import TransferEngine

/// The timetable at instants on both sides of each boundary, in several time zones: the local
/// time an instant maps to decides the entry, never the day the tests run.
@Suite struct WallClockTests {
    typealias Time = LimitSchedule.LocalTime

    /// Offsets east of UTC: UTC, Tokyo, New York in winter, India (a half hour).
    static let zones = [0, 9 * 3600, -5 * 3600, 5 * 3600 + 1800]

    /// The instant whose local time, `utcOffset` seconds east of UTC, reads `local`
    /// (`2026-11-27T23:59:59`; 2026-11-27 is a Friday).
    func instant(_ local: String, utcOffset: Int) throws -> Timestamp {
        let asIfUTC = try #require(Timestamp(iso8601: local + "Z"))
        return asIfUTC.adding(milliseconds: -Int64(utcOffset) * 1000)
    }

    func entry(_ schedule: LimitSchedule, at local: String, utcOffset: Int) throws -> String? {
        let time = Time(at: try instant(local, utcOffset: utcOffset), utcOffsetSeconds: utcOffset)
        return schedule.active(at: time)?.text
    }

    @Test(arguments: zones)
    func weekdayAndWeekendAndMidnight(utcOffset: Int) throws {
        let schedule = try LimitSchedule.parse("Mon-Fri 08:00-18:00 down=1M; Sat,Sun up=2M; * off")
        let office = "Mon-Fri 08:00-18:00 down=1M", weekend = "Sat,Sun up=2M", off = "* off"
        let cases: [(String, String)] = [
            ("2026-11-27T23:59:59", off),      // Friday night
            ("2026-11-28T00:00:00", weekend),  // Saturday's first second
            ("2026-11-28T23:59:30", weekend),
            ("2026-11-29T23:59:59", weekend),  // Sunday's last second
            ("2026-11-30T00:00:00", off),      // Monday before office hours
            ("2026-11-30T07:59:59", off),      // an entry's start minute
            ("2026-11-30T08:00:00", office),
            ("2026-11-30T12:00:00", office),
            ("2026-11-30T17:59:59", office),   // its end minute
            ("2026-11-30T18:00:00", off),
        ]
        for (local, expected) in cases {
            #expect(try entry(schedule, at: local, utcOffset: utcOffset) == expected, "\(local) at UTC\(utcOffset / 60) min")
        }
    }

    @Test(arguments: zones)
    func windowsPastMidnight(utcOffset: Int) throws {
        let schedule = try LimitSchedule.parse("Fri 22:00-06:00 down=4M")
        let cases: [(String, String?)] = [
            ("2026-11-27T21:59:59", nil),
            ("2026-11-27T22:00:00", "Fri 22:00-06:00 down=4M"),
            ("2026-11-28T00:00:00", "Fri 22:00-06:00 down=4M"),  // Saturday, still Friday's night
            ("2026-11-28T05:59:59", "Fri 22:00-06:00 down=4M"),
            ("2026-11-28T06:00:00", nil),
            ("2026-11-28T22:00:00", nil),                         // Saturday's own night is not listed
        ]
        for (local, expected) in cases {
            #expect(try entry(schedule, at: local, utcOffset: utcOffset) == expected, "\(local) at UTC\(utcOffset / 60) min")
        }
    }

    @Test func oneInstantIsADifferentDayInDifferentZones() throws {
        // Friday 20:00 UTC is Saturday 05:00 in Tokyo and Friday 15:00 in New York.
        let instant = try #require(Timestamp(iso8601: "2026-11-27T20:00:00Z"))
        #expect(Time(at: instant, utcOffsetSeconds: 0) == Time(weekday: 4, minute: 20 * 60))
        #expect(Time(at: instant, utcOffsetSeconds: 9 * 3600) == Time(weekday: 5, minute: 5 * 60))
        #expect(Time(at: instant, utcOffsetSeconds: -5 * 3600) == Time(weekday: 4, minute: 15 * 60))
    }

    @Test func instantsBeforeTheEpochAndMillisecondsRoundDown() {
        // 1969-12-31T23:59:59.999Z was a Wednesday.
        #expect(Time(at: Timestamp(milliseconds: -1), utcOffsetSeconds: 0) == Time(weekday: 2, minute: 23 * 60 + 59))
        // 1970-01-01T00:00:00.999Z, a Thursday.
        #expect(Time(at: Timestamp(milliseconds: 999), utcOffsetSeconds: 0) == Time(weekday: 3, minute: 0))
    }

    @Test func aClockStartedAtAnInstantReadsItAndRunsOn() throws {
        let start = try #require(Timestamp(iso8601: "2026-11-28T23:59:30Z"))
        let systemNow = Timestamp.now
        let clock = WallClock(startingAt: start, systemNow: systemNow)
        let elapsed = Timestamp.now.rawValue - systemNow.rawValue
        let read = clock.now.rawValue - start.rawValue
        #expect(read >= elapsed && read < elapsed + 60_000, "read \(read) ms after the start")
    }
}
