import Testing
@testable import TransferEngine

@Suite struct TokenBucketTests {
    /// Moves `chunk`-byte pieces whenever the bucket allows, for `seconds` of fake time in 1 ms
    /// steps; returns the bytes moved in each second.
    func simulate(rate: Int64, chunk: Int, seconds: Int) -> [Int] {
        var bucket = TokenBucket(rate: rate)
        var perSecond = [Int](repeating: 0, count: seconds)
        for now in 0..<Int64(seconds * 1000) where bucket.allows(now: now) {
            bucket.take(chunk, now: now)
            perSecond[Int(now / 1000)] += chunk
        }
        return perSecond
    }

    @Test func averageIsWithinAPercentOfTheRate() {
        let rate: Int64 = 5 << 20
        let moved = simulate(rate: rate, chunk: 64 * 1024, seconds: 20)
        let average = Double(moved.reduce(0, +)) / 20
        #expect(abs(average - Double(rate)) / Double(rate) < 0.01)
        for (second, bytes) in moved.enumerated().dropFirst() {
            #expect(abs(Double(bytes) - Double(rate)) / Double(rate) < 0.05, "second \(second): \(bytes)")
        }
    }

    @Test func burstAfterIdlingIsBounded() {
        var bucket = TokenBucket(rate: 1 << 20)
        _ = bucket.allows(now: 0)
        // A long idle time earns at most the capacity: 100 ms of the rate.
        bucket.refill(now: 60_000)
        #expect(bucket.tokens == bucket.capacity)
        #expect(bucket.capacity == Double((1 << 20) / 10))
        #expect(TokenBucket(rate: 1000).capacity == 16 * 1024, "at least 16 KiB")
    }

    @Test func debtIsRepaidBeforeMoreMoves() {
        var bucket = TokenBucket(rate: 1000)
        let first = bucket.allows(now: 0)
        #expect(first)
        bucket.take(2000, now: 0)
        let early = bucket.allows(now: 1000)
        #expect(!early)
        let wait = bucket.wait(now: 1000)
        #expect(wait == 1000)
        let later = bucket.allows(now: 2000)
        #expect(later)
    }

    @Test func unlimitedAlwaysAllows() {
        var bucket = TokenBucket(rate: nil)
        bucket.take(1 << 30, now: 0)
        let allowed = bucket.allows(now: 0)
        let wait = bucket.wait(now: 0)
        #expect(allowed)
        #expect(wait == 0)
    }

    @Test func rateChangesTakeEffectAtOnce() {
        var bucket = TokenBucket(rate: 1000)
        _ = bucket.allows(now: 0)
        bucket.take(10_000, now: 0)
        let slow = bucket.wait(now: 0)
        #expect(slow == 10_000)
        bucket.setRate(10_000, now: 0)
        let fast = bucket.wait(now: 0)
        #expect(fast == 1000)
        bucket.setRate(nil, now: 0)
        let unlimited = bucket.allows(now: 0)
        #expect(unlimited)
    }

    @Test func fourTransfersShareAGlobalBucketFairly() {
        // Each transfer moves a 64 KiB chunk whenever both its own (unlimited) and the global
        // bucket allow; turns rotate as the loop would deliver socket events.
        var global = TokenBucket(rate: 4 << 20)
        var moved = [Int](repeating: 0, count: 4)
        for now in Int64(0)..<20_000 {
            for index in 0..<4 {
                let transfer = (index + Int(now)) % 4
                guard global.allows(now: now) else { break }
                global.take(64 * 1024, now: now)
                moved[transfer] += 64 * 1024
            }
        }
        let total = Double(moved.reduce(0, +)) / 20
        #expect(abs(total - Double(4 << 20)) / Double(4 << 20) < 0.02)
        let share = Double(moved.reduce(0, +)) / 4
        for bytes in moved { #expect(abs(Double(bytes) - share) / share < 0.05) }
    }
}

@Suite struct LimitScheduleTests {
    typealias Time = LimitSchedule.LocalTime

    @Test func weekdayOfficeHoursThenUnlimited() throws {
        let schedule = try LimitSchedule.parse("Mon-Fri 08:00-18:00 down=1M up=512K; * off")
        let monday9 = schedule.active(at: Time(weekday: 0, minute: 9 * 60))
        #expect(monday9?.down == .some(1 << 20))
        #expect(monday9?.up == .some(512 << 10))
        #expect(schedule.active(at: Time(weekday: 4, minute: 17 * 60 + 59))?.text == "Mon-Fri 08:00-18:00 down=1M up=512K")
        // The boundary: 18:00 belongs to the next entry.
        #expect(schedule.active(at: Time(weekday: 4, minute: 18 * 60))?.text == "* off")
        #expect(schedule.active(at: Time(weekday: 0, minute: 7 * 60 + 59))?.text == "* off")
        #expect(schedule.active(at: Time(weekday: 5, minute: 12 * 60))?.down == .some(nil))
    }

    @Test func windowsWrapPastMidnight() throws {
        let schedule = try LimitSchedule.parse("Fri 22:00-06:00 down=4M")
        #expect(schedule.active(at: Time(weekday: 4, minute: 23 * 60)) != nil)
        #expect(schedule.active(at: Time(weekday: 5, minute: 5 * 60)) != nil, "Saturday early morning")
        #expect(schedule.active(at: Time(weekday: 5, minute: 6 * 60)) == nil)
        #expect(schedule.active(at: Time(weekday: 4, minute: 5 * 60)) == nil, "Friday early morning belongs to Thursday")
    }

    @Test func dayListsAndRangesAcrossTheWeekEnd() throws {
        let schedule = try LimitSchedule.parse("Sat,Sun up=1M; Fri-Mon down=2M")
        #expect(schedule.active(at: Time(weekday: 6, minute: 0))?.text == "Sat,Sun up=1M")
        #expect(schedule.active(at: Time(weekday: 0, minute: 0))?.text == "Fri-Mon down=2M")
        #expect(schedule.active(at: Time(weekday: 2, minute: 0)) == nil)
    }

    @Test func effectiveLimitsFallBackToTheGlobalOnes() throws {
        let settings = LimitSettings(down: 8 << 20, up: 1 << 20, schedule: try LimitSchedule.parse("Mon down=1M; Tue off"))
        #expect(settings.effective(at: Time(weekday: 0, minute: 0)).down == 1 << 20)
        #expect(settings.effective(at: Time(weekday: 0, minute: 0)).up == 1 << 20, "up left alone")
        #expect(settings.effective(at: Time(weekday: 1, minute: 0)).down == nil, "off")
        #expect(settings.effective(at: Time(weekday: 2, minute: 0)).down == 8 << 20, "no entry")
    }

    @Test func errorsPointAtTheBadToken() {
        let cases = ["Mox-Fri 08:00-18:00 down=1M": "'Mox-Fri'", "Mon 8-18 down=1M": "'8-18'",
                     "Mon 08:00-18:00 down=fast": "'down=fast'", "Mon 08:00-18:00 left=1M": "'left=1M'",
                     "Mon 08:00-18:00": "expected 'off'", "": "no entries", "Mon 25:00-26:00 off": "'25:00-26:00'"]
        for (text, token) in cases {
            do {
                _ = try LimitSchedule.parse(text)
                Issue.record("'\(text)' should be refused")
            } catch {
                #expect(error.message.contains(token), "\(error.message)")
            }
        }
    }
}

@Suite struct PacerTests {
    /// An upload is handed one piece of 1/200 of the stricter rate (at least 1 KiB, at most what
    /// curl asks for), and owes it: the next piece waits for the debt.
    @Test func uploadPiecesAreAFixedShareOfTheStricterRate() throws {
        let loop = try UVLoop()
        var now: Int64 = 0
        let global = SharedBucket(loop: loop, rate: nil, clock: { now })
        let pacer = Pacer(loop: loop, global: global, rate: 5 << 20, clock: { now })
        #expect(pacer.allowance(64 * 1024) == (5 << 20) / 200)
        #expect(pacer.allowance(8 * 1024) == 8 * 1024, "never more than asked for")
        #expect(pacer.allowance(100) == 100)
        global.setRate(100 * 1024, now: now)
        #expect(pacer.allowance(64 * 1024) == 1024, "the global limit is stricter: 512 B, raised to 1 KiB")
        global.setRate(nil, now: now)
        pacer.setRate(nil)
        #expect(pacer.allowance(64 * 1024) == 64 * 1024, "unlimited: what curl asks for")

        pacer.setRate(1 << 20)
        #expect(pacer.admit())
        pacer.moved(pacer.allowance(64 * 1024))
        #expect(!pacer.admit(), "the piece is owed")
        now += 5
        #expect(pacer.admit(), "5 ms at 1 MiB/s repay a 5 KiB piece")
        pacer.stop()
    }
}
