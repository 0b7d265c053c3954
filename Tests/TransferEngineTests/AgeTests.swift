import Testing
@testable import TransferEngine

/// `prune --older-than` and `transferd --keep-history`: how an age is written, and which ended
/// states a prune may take.
@Suite struct AgeTests {
    @Test(arguments: [("90s", 90), ("30m", 1800), ("12h", 43_200), ("7d", 604_800), ("2w", 1_209_600),
                      ("1d12h", 129_600), ("1h30m", 5400), ("0s", 0), ("36500d", 3_153_600_000)])
    func parsesWholeNumbersWithAUnit(_ text: String, _ seconds: Int64) throws {
        #expect(try Age.parse(text, "--older-than").seconds == seconds)
    }

    @Test(arguments: ["", "7", "d", "7x", "-1d", "1.5h", "7d3", " 7d", "7d ", "7 d", "7D", "+7d", "٣d"])
    func refusesAnythingElseNamingTheOption(_ text: String) {
        #expect(throws: Age.ParseError(text: text, field: "--older-than")) { try Age.parse(text, "--older-than") }
        let message = Age.ParseError(text: text, field: "--older-than").message
        #expect(message.hasPrefix("--older-than needs an age like 7d"))
    }

    @Test(arguments: ["36501d", "99999999999999999999d", "9223372036854775807w", "36500d1s"])
    func refusesMoreThanAHundredYearsWithoutWrapping(_ text: String) {
        #expect(throws: Age.ParseError(text: text, field: "--keep-history", tooLong: true)) {
            try Age.parse(text, "--keep-history")
        }
        #expect(Age.ParseError(text: text, field: "--keep-history", tooLong: true).message
            == "--keep-history must be at most 36500d, got '\(text)'")
    }

    @Test func isShownInItsLargestWholeUnit() throws {
        #expect(try Age.parse("168h", "x").description == "1w")
        #expect(try Age.parse("1d12h", "x").description == "36h")
        #expect(try Age.parse("90s", "x").description == "90s")
        #expect(try Age.parse("0s", "x").description == "0s")
        #expect(try Age(seconds: 86_400 * 30).description == "30d")
        #expect(throws: OutOfRange.self) { try Age(seconds: -1) }
        #expect(try Age.parse("7d", "x").milliseconds == 604_800_000)
    }

    @Test func aPruneTakesOnlyEndedStatesInAFixedOrder() throws {
        #expect(try PruneCriteria().states == [.completed, .failed, .cancelled])
        #expect(try PruneCriteria(states: [.cancelled, .completed, .cancelled]).states == [.completed, .cancelled])
        for state in [JobState.queued, .running, .paused, .waiting] {
            #expect(throws: PruneRefusal.unfinishedState(state)) { try PruneCriteria(states: [.failed, state]) }
        }
        #expect(throws: PruneRefusal.noState) { try PruneCriteria(states: []) }
        #expect(PruneRefusal.unfinishedState(.queued).message
            == "prune deletes only ended jobs (completed, failed, cancelled); a queued job has not ended")
    }

    @Test func theCutoffIsTheAgeBeforeNow() throws {
        let now = Timestamp(milliseconds: 10_000_000_000)
        #expect(try PruneCriteria(olderThan: Age.parse("1h", "x")).cutoff(now: now) == Timestamp(milliseconds: 10_000_000_000 - 3_600_000))
        #expect(try PruneCriteria().cutoff(now: now) == nil)
    }
}
