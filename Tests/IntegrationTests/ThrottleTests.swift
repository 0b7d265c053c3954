import Foundation
import XCTest

/// Bandwidth limits observed from the outside: per job, global, and changed while running.
/// A limit can only make a transfer slower, so the lower bounds on time are firm; the upper
/// bounds are loose because this machine is shared.
final class ThrottleTests: IntegrationTestCase {
    func testJobLimitHoldsTheObservedRate() throws {
        let size = 3 * MiB
        let sha = try makeSource("limited.bin", size: size)
        let dest = destination("limited.bin")
        let id = try cli.download(nginx.url(.files, "limited.bin"), to: dest, ["--limit-rate", "1M", "--paused"])
        XCTAssertEqual(jsonInt(try cli.job(id)["limit"]), MiB)

        let elapsed = try secondsToComplete(resuming: [id])
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        assertLimited(elapsed, bytes: size, rate: MiB, "3 MiB at 1 MiB/s")
    }

    func testGlobalLimitIsSharedByConcurrentTransfers() throws {
        XCTAssertEqual(cli.run(["limit", "--down", "2M"]).exitCode, 0)
        var ids: [Int] = []
        for name in ["a.bin", "b.bin", "c.bin"] {
            try makeSource(name, size: 2 * MiB)
            ids.append(try cli.download(nginx.url(.files, name), to: destination(name), ["--paused"]))
        }
        // 6 MiB under one 2 MiB/s limit: 3 s however it is split.
        assertLimited(try secondsToComplete(resuming: ids), bytes: 6 * MiB, rate: 2 * MiB, "6 MiB under a 2 MiB/s global limit")
        let stats = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cli.run(["stats", "--json"]).stdout.utf8)) as? [String: Any])
        let limits = try XCTUnwrap(stats["limits"] as? [String: Any])
        XCTAssertEqual(jsonInt(limits["down"]), 2 * MiB, "stats shows the limit in force")
    }

    func testLimitChangedWhileRunningTakesEffect() throws {
        let size = 8 * MiB
        let sha = try makeSource("live.bin", size: size)
        let dest = destination("live.bin")
        let id = try cli.download(nginx.url(.files, "live.bin"), to: dest, ["--limit-rate", "256K"])
        try awaitProgress(id, atLeast: 256 * KiB, total: size, timeout: 5)
        let slow = try XCTUnwrap(try cli.job(id).bytesDone)
        XCTAssertLessThan(slow, 2 * MiB, "throttled to 256 KiB/s: \(slow) bytes so far")

        let changed = Date()
        XCTAssertEqual(cli.run(["limit", String(id), "off"]).exitCode, 0)
        try waitCompleted(id, timeout: 10)
        // The remaining 7+ MiB would take 28 s at 256 KiB/s: unlimited, they take moments.
        XCTAssertLessThan(Date().timeIntervalSince(changed), 5, "the raised limit applied within a second")
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
    }

    func testLimitsPersistAcrossRestarts() throws {
        XCTAssertEqual(cli.run(["limit", "--down", "3M", "--up", "1M"]).exitCode, 0)
        XCTAssertEqual(cli.run(["limit", "--schedule", "Sat,Sun down=512K"]).exitCode, 0)
        XCTAssertTrue(daemon.terminate(timeout: 5))
        try daemon.start()
        let stats = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cli.run(["stats", "--json"]).stdout.utf8)) as? [String: Any])
        let configured = try XCTUnwrap(stats["configuredLimits"] as? [String: Any], "\(stats)")
        XCTAssertEqual(jsonInt(configured["down"]), 3 * MiB)
        XCTAssertEqual(jsonInt(configured["up"]), MiB)
        XCTAssertEqual(stats["schedule"] as? String, "Sat,Sun down=512K")
    }

    /// The timetable follows the daemon's clock in its own time zone: Friday 20:00 UTC is
    /// Saturday 05:00 in Tokyo and Friday 15:00 in New York.
    func testTimetableFollowsTheDaemonsClockAndTimeZone() throws {
        XCTAssertEqual(cli.run(["limit", "--down", "4M", "--schedule", "Sat,Sun down=1M"]).exitCode, 0)
        for (zone, expected) in [("Asia/Tokyo", "Sat,Sun down=1M"), ("America/New_York", nil)] {
            daemon.stop()
            let zoned = Daemon(binaries: binaries, stateDir: daemon.stateDir, logURL: daemon.logURL, cli: cli,
                               extraArguments: ["--test-clock", "2026-11-27T20:00:00Z"], environment: ["TZ": zone])
            defer { zoned.stop() }
            try zoned.start()
            let stats = try XCTUnwrap(try cli.json(["stats"]) as? [String: Any])
            XCTAssertEqual(stats["scheduleEntry"] as? String, expected, "TZ=\(zone): \(stats)")
            let limits = try XCTUnwrap(stats["limits"] as? [String: Any], "\(stats)")
            XCTAssertEqual(jsonInt(limits["down"]), expected == nil ? 4 * MiB : MiB, "TZ=\(zone)")
        }
    }

    func testBadTimetableIsRefusedPointingAtTheToken() throws {
        let result = cli.run(["limit", "--schedule", "Mon-Fri 08:00-18:00 down=1M; Mox 09:00-10:00 off"])
        XCTAssertEqual(result.exitCode, 2, result.summary)
        XCTAssertTrue(result.stderr.contains("'Mox'"), result.stderr)
        assertOneLineMessage(result.stderr, "bad timetable")
    }
}
