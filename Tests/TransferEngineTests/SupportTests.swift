import Foundation
import Testing
@testable import TransferEngine

@Suite struct RateTests {
    @Test func parsesSuffixesInPowersOf1024() throws {
        #expect(try Rate.parse("512K") == 512 * 1024)
        #expect(try Rate.parse("4M") == 4 * 1024 * 1024)
        #expect(try Rate.parse("1.5M") == 1_572_864)
        #expect(try Rate.parse("2G") == 2 * 1024 * 1024 * 1024)
        #expect(try Rate.parse("1000") == 1000)
        #expect(try Rate.parse("0") == nil)
        #expect(try Rate.parse("off") == nil)
    }

    @Test func refusesNonsense() {
        for text in ["", "M", "-1", "4X", "1..5K", "fast", "1e99G"] {
            #expect(throws: Rate.ParseError.self, "\(text)") { try Rate.parse(text) }
        }
    }

    @Test func describesHumanSizes() {
        #expect(ByteCount.describe(512) == "512 B")
        #expect(ByteCount.describe(1536) == "1.5 KiB")
        #expect(Rate.describe(4 * 1024 * 1024) == "4.0 MiB/s")
        #expect(Rate.describe(nil) == "unlimited")
    }
}

@Suite struct SHA256Tests {
    @Test func knownVectors() {
        var empty = SHA256()
        #expect(empty.finalizeHex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        var abc = SHA256()
        abc.update(Array("abc".utf8))
        #expect(abc.finalizeHex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var long = SHA256()
        long.update(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
        #expect(long.finalizeHex() == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func streamingEqualsOneShot() {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var whole = SHA256()
        whole.update(bytes)
        var pieces = SHA256()
        var index = 0
        for size in [1, 63, 64, 65, 1000, 7] where index < bytes.count {
            pieces.update(bytes[index..<min(bytes.count, index + size)])
            index += size
        }
        pieces.update(bytes[index...])
        #expect(whole.finalizeHex() == pieces.finalizeHex())
    }

    @Test func millionAs() {
        var hash = SHA256()
        hash.update([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
        #expect(hash.finalizeHex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}

@Suite struct LineFramerTests {
    func feed(_ framer: inout LineFramer, _ text: String) -> [LineFramer.Output] {
        Array(text.utf8).withUnsafeBytes { framer.feed($0) }
    }

    @Test func splitsAcrossChunks() {
        var framer = LineFramer(limit: 100)
        #expect(feed(&framer, "ab").isEmpty)
        #expect(feed(&framer, "c\nde\nf") == [.line(Array("abc".utf8)), .line(Array("de".utf8))])
        #expect(feed(&framer, "\n") == [.line(Array("f".utf8))])
    }

    @Test func refusesAnOverlongLine() {
        var framer = LineFramer(limit: 4)
        #expect(feed(&framer, "abcdef") == [.tooLong])
        var other = LineFramer(limit: 4)
        #expect(feed(&other, "abcdefg\nok\n").first == .tooLong)
    }
}

@Suite struct StatePathsTests {
    @Test func defaultsFollowTheSpec() {
        let env: [String: String] = ["HOME": "/home/u"]
        #expect(StatePaths(stateDirectory: nil, socket: nil) { env[$0] }.directory == "/home/u/.local/state/transferd")
        let xdg = ["HOME": "/home/u", "XDG_STATE_HOME": "/x/state"]
        #expect(StatePaths(stateDirectory: nil, socket: nil) { xdg[$0] }.directory == "/x/state/transferd")
        let explicit = ["TRANSFERD_STATE_DIR": "/srv/t", "TRANSFERD_SOCKET": "/run/t.sock", "XDG_STATE_HOME": "/x"]
        let paths = StatePaths(stateDirectory: nil, socket: nil) { explicit[$0] }
        #expect(paths.directory == "/srv/t")
        #expect(paths.socket == "/run/t.sock")
        let flags = StatePaths(stateDirectory: "/a/b/", socket: nil) { explicit[$0] }
        #expect(flags.directory == "/a/b")
        #expect(flags.database == "/a/b/transfers.db")
        #expect(StatePaths(stateDirectory: "/d", socket: nil) { _ in nil }.socket == "/d/transferd.sock")
    }

    @Test func absolutePathsAreNormalised() {
        #expect(StatePaths.absolute("/a/./b/../c") == "/a/c")
        for normal in ["/", "/a", "/a/b.c", "/a/...", "/.a/b..", "/a/.b/c."] {
            #expect(StatePaths.isNormal(normal), "\(normal)")
            #expect(StatePaths.absolute(normal) == normal)
        }
        for spelled in ["", "a/b", "//a", "/a/", "/a//b", "/./a", "/a/.", "/a/..", "/a/../b", "/a/./b"] {
            #expect(!StatePaths.isNormal(spelled), "\(spelled)")
        }
        #expect(StatePaths.absolute("/a//b/") == "/a/b")
        #expect(StatePaths.absolute("rel").hasPrefix("/"))
    }
}

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy()

    @Test func retriesOnlyTransientFailures() {
        for status in [408, 429, 500, 502, 503, 504] { #expect(policy.isRetryable(.httpStatus(status))) }
        for status in [400, 401, 403, 404, 410, 416, 501] { #expect(!policy.isRetryable(.httpStatus(status))) }
        #expect(policy.isRetryable(.network("reset")))
        #expect(policy.isRetryable(.stalled(seconds: 60)))
        #expect(!policy.isRetryable(.tls("bad cert")))
        #expect(!policy.isRetryable(.checksumMismatch(expected: "a", actual: "b")))
        #expect(!policy.isRetryable(.diskFull(path: "/x")))
    }

    @Test func backoffGrowsAndIsCapped() {
        let maximum: (ClosedRange<Double>) -> Double = { $0.upperBound }
        #expect(policy.delay(afterAttempt: 1, random: maximum) == 1000)
        #expect(policy.delay(afterAttempt: 2, random: maximum) == 2000)
        #expect(policy.delay(afterAttempt: 4, random: maximum) == 8000)
        #expect(policy.delay(afterAttempt: 30, random: maximum) == 300_000)
        #expect(policy.delay(afterAttempt: 3) { $0.lowerBound } == 100)
    }
}

@Suite struct RetryAfterTests {
    @Test func secondsAndHTTPDates() {
        #expect(RetryAfter.milliseconds("120") == 120_000)
        #expect(RetryAfter.milliseconds(" 0 ") == 0)
        // 1994-11-06 08:49:37 UTC is 784111777 s after the epoch.
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        let now = Timestamp(rawValue: 784_111_777_000 - 5000)
        #expect(RetryAfter.milliseconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 5000)
        #expect(RetryAfter.milliseconds("Sun, 06 Nov 1994 08:49:37 GMT") == 0, "a date in the past means now")
        #expect(RetryAfter.milliseconds("soon") == nil)
        #expect(RetryAfter.milliseconds("-5") == nil)
    }
}

@Suite struct HostProbeTests {
    @Test func oneKeyPerSchemeHostAndPort() {
        #expect(HostProbe(jobURL: "https://example.com/a/b?c")?.key == "https://example.com:443")
        #expect(HostProbe(jobURL: "https://example.com/a/b?c")?.url == "http://example.com:443/")
        #expect(HostProbe(jobURL: "http://127.0.0.1:8080/x")?.key == "http://127.0.0.1:8080")
        #expect(HostProbe(jobURL: "http://example.com/")?.key == HostProbe(jobURL: "http://example.com:80/other")?.key)
        #expect(HostProbe(jobURL: "not a url") == nil)
    }
}

@Suite struct EventFilterTests {
    @Test func jobsBatchAndTypesEachNarrowAndNilMeansAny() {
        var event = TransferEvent(.state, job: JobID(rawValue: 3))
        event.batch = 7
        #expect(EventFilter.all.matches(event))
        #expect(EventFilter(jobs: [JobID(rawValue: 3)]).matches(event))
        #expect(!EventFilter(jobs: [JobID(rawValue: 4)]).matches(event))
        #expect(EventFilter(batch: 7).matches(event))
        #expect(!EventFilter(batch: 8).matches(event))
        #expect(EventFilter(types: [.state, .progress]).matches(event))
        #expect(!EventFilter(types: [.progress]).matches(event))
        #expect(!EventFilter(jobs: [JobID(rawValue: 3)]).matches(TransferEvent(.limitChanged)), "a job filter drops events about no job")
        #expect(!EventFilter(batch: 7, types: [.progress]).matches(event), "every condition must hold")
    }
}

@Suite struct ISO8601Tests {
    /// Milliseconds from 1900 to 2200, and the last one of year 9999. (Before 1582 Foundation
    /// counts days in the Julian calendar; ISO 8601, and this, in the Gregorian.)
    private static func instants() -> [Int64] {
        var generator = SplitMix64(seed: 8601)
        let span = UInt64(9_467_280_000_000)  // 300 years of milliseconds
        return [0, -1, 1, 999, -1000, 951_782_400_000, 253_402_300_799_999, -2_208_988_800_000]
            + (0..<3000).map { _ in Int64(generator.next() % span) - 2_208_988_800_000 }
    }

    /// Foundation's format agrees to the second; its fraction is the `Double`'s, truncated, and
    /// half the time one millisecond short (`.849` for 850 ms), which then read back a millisecond
    /// early. The one written here is the stored millisecond.
    @Test func aTimestampIsWrittenAsFoundationWritesItToTheExactMillisecond() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for milliseconds in Self.instants() {
            let written = Timestamp(milliseconds: milliseconds).iso8601
            let second = milliseconds.floorDivided(by: 1000)
            let foundation = Date(timeIntervalSince1970: Double(second)).formatted(style)
            let fraction = milliseconds - second * 1000
            #expect(written == foundation.dropLast(4) + String(1000 + fraction).dropFirst() + "Z", "\(milliseconds)")
        }
    }

    @Test func aTimestampReadsBackAndReadsWhatFoundationReads() throws {
        for milliseconds in Self.instants() {
            #expect(Timestamp(iso8601: Timestamp(milliseconds: milliseconds).iso8601)?.rawValue == milliseconds)
        }
        #expect(Timestamp(iso8601: "2023-11-14T22:13:20Z")?.rawValue == 1_700_000_000_000)
        #expect(Timestamp(iso8601: "2023-11-14T22:13:20.1235Z")?.rawValue == 1_700_000_000_124, "rounded")
        #expect(Timestamp(iso8601: "1969-12-31T23:59:59.9996Z")?.rawValue == 0, "rounded up to the epoch")
        // Another form of ISO 8601 goes to Foundation's parser, as before.
        let offset = try #require(try? Date("2023-11-14T23:13:20+01:00", strategy: Date.ISO8601FormatStyle()))
        #expect(Timestamp(iso8601: "2023-11-14T23:13:20+01:00")?.date == offset)
        for bad in ["", "yesterday", "2023-11-14T22:13:20.Z", "2023-11-14"] {
            #expect(Timestamp(iso8601: bad) == nil, "\(bad)")
        }
    }
}

@Suite struct FileTimeTests {
    @Test func writesUTCToTheNanosecondAndReadsItBack() {
        #expect(FileTime.iso8601(nanoseconds: 1_700_000_000_123_456_789) == "2023-11-14T22:13:20.123456789Z")
        #expect(FileTime.iso8601(nanoseconds: 0) == "1970-01-01T00:00:00.000000000Z")
        #expect(FileTime.iso8601(nanoseconds: -1) == "1969-12-31T23:59:59.999999999Z")
        #expect(FileTime.iso8601(nanoseconds: 951_782_400_000_000_007) == "2000-02-29T00:00:00.000000007Z")
        var generator = SplitMix64(seed: 18)
        for value in [Int64.min, Int64.max, 1, -86_400_000_000_000] + (0..<2000).map({ _ in Int64(bitPattern: generator.next()) }) {
            #expect(FileTime.nanoseconds(iso8601: FileTime.iso8601(nanoseconds: value)) == value, "\(value)")
        }
    }

    @Test func readsFewerDigitsAndRefusesWhatIsNotATime() {
        #expect(FileTime.nanoseconds(iso8601: "2023-11-14T22:13:20Z") == 1_700_000_000_000_000_000)
        #expect(FileTime.nanoseconds(iso8601: "2023-11-14T22:13:20.5Z") == 1_700_000_000_500_000_000)
        for bad in ["", "2023-11-14 22:13:20Z", "2023-02-29T00:00:00Z", "2023-11-14T24:00:00Z", "2023-11-14T22:13:20.Z",
                    "2023-11-14T22:13:20.1234567890Z", "2023-11-14T22:13:20+01:00", "9999-12-31T23:59:59Z", "2023-1a-14T22:13:20Z"] {
            #expect(FileTime.nanoseconds(iso8601: bad) == nil, "\(bad)")
        }
    }

    @Test func aSourceFileReadsTheNumberOlderRowsHoldAndWritesTheTime() throws {
        let old = try JSONDecoder().decode(SourceFile.self, from: Data(#"{"path":"/a","size":3,"modified":1700000000123456789}"#.utf8))
        #expect(old == SourceFile(path: "/a", size: 3, modified: 1_700_000_000_123_456_789))
        let written = String(decoding: try JSONEncoder().encode(old), as: UTF8.self)
        #expect(written.contains(#""modified":"2023-11-14T22:13:20.123456789Z""#), "\(written)")
        #expect(try JSONDecoder().decode(SourceFile.self, from: Data(written.utf8)) == old)
    }
}
