import Foundation
import XCTest

/// Retries against a fault-injecting server (`Harness/fault_server.py`): dropped
/// connections, short bodies, 503 + Retry-After, stalls, an entity that changes between
/// attempts, a server ignoring Range, and a trickle paused in the middle.
/// Faults hit only the first `times` requests of a name, so every test ends in success.
final class FaultTests: FaultServerTestCase {
    /// A daemon started by a test with extra arguments (the base class's is stopped then).
    private var customDaemon: Daemon?

    override func tearDownWithError() throws {
        customDaemon?.stop()
        try super.tearDownWithError()
    }

    // MARK: helpers

    private static let retryOptions = ["--retry", "3"]

    /// Stops the daemon and starts another on the same state directory with `arguments`.
    private func restartDaemon(with arguments: [String]) throws {
        daemon.stop()
        let custom = Daemon(binaries: binaries, stateDir: daemon.stateDir, logURL: daemon.logURL, cli: cli,
                            extraArguments: arguments)
        customDaemon = custom
        try custom.start()
    }

    /// ISO 8601 time from `show --json` (fractional seconds optional).
    private func date(_ value: Any?) -> Date? {
        guard let text = value as? String else { return nil }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    /// Seconds between the end of attempt `i` and the start of attempt `i + 1`.
    private func gapAfterAttempt(_ i: Int, in job: JobJSON) throws -> TimeInterval {
        let log = job.attemptLog
        guard log.count > i + 1 else { throw HarnessError("need \(i + 2) attempts: \(job.jsonText)") }
        guard let ended = date(log[i]["endedAt"]), let started = date(log[i + 1]["startedAt"]) else {
            throw HarnessError("attempt times missing or not ISO 8601: \(job.jsonText)")
        }
        return started.timeIntervalSince(ended)
    }

    private func intField(_ entry: [String: Any], _ key: String) -> Int? { jsonInt(entry[key]) }

    // MARK: tests

    /// The sanity check the rest relies on: the server's ranges, If-Range and drop fault.
    func testHarnessFaultServerBehaves() throws {
        let curl = try CommandRunner(scratch: workDir.appendingPathComponent("curl"))
        let url = faults.url("probe.bin", size: 1000)
        let ranged = curl.run(FaultServer.curl, ["-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                                                 "-H", "Range: bytes=100-", "-H", "If-Range: \"probe.bin-v1\"", url],
                              timeout: 10)
        XCTAssertEqual(ranged.trimmedStdout, "206 900", ranged.summary)
        let stale = curl.run(FaultServer.curl, ["-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                                                "-H", "Range: bytes=100-", "-H", "If-Range: \"probe.bin-v0\"", url],
                             timeout: 10)
        XCTAssertEqual(stale.trimmedStdout, "200 1000", stale.summary)
        let dropURL = faults.url("dropprobe.bin", size: 4000, ["drop": "1000", "times": "1"])
        let dropped = curl.run(FaultServer.curl, ["-s", "-o", "/dev/null", "-w", "%{size_download}", dropURL], timeout: 10)
        XCTAssertEqual(dropped.exitCode, 18, "curl: partial file; \(dropped.summary)")
        XCTAssertEqual(dropped.trimmedStdout, "1000", dropped.summary)
        let second = curl.run(FaultServer.curl, ["-s", "-o", "/dev/null", "-w", "%{size_download}", dropURL], timeout: 10)
        XCTAssertEqual(second.exitCode, 0, second.summary)
        XCTAssertEqual(second.trimmedStdout, "4000", second.summary)
    }

    /// A redirect to a URL libcurl refuses (CURLE_URL_MALFORMAT) fails the job at once, with
    /// libcurl's reason: a request error is permanent, however many retries are left.
    func testRedirectToAURLLibcurlRefusesIsNotRetried() throws {
        let id = try cli.download(faults.baseURL + "/redirect?to=http%3A%2F%2F127.0.0.1%3A99999%2Fx",
                                  to: destination("redirected.bin"), Self.retryOptions)
        let job = try cli.awaitState(id, "failed", timeout: 10)
        XCTAssertEqual(job.errorCode, "request", job.jsonText)
        XCTAssertEqual(job.attemptLog.count, 1, "never retried: \(job.jsonText)")
        assertOneLineMessage(job.errorMessage ?? "", "error.message")
        XCTAssertEqual(((try? faults.log()) ?? []).filter { $0["name"] as? String == "redirect" }.count, 1,
                       faults.describeLog())
    }

    /// Connection closed after N body bytes: the retry continues from the kept bytes.
    func testDroppedConnectionRetriesWithRangeFromKeptBytes() throws {
        let name = "drop.bin"
        let size = 4 * MiB
        let dropAt = 2 * MiB
        let sha = try faults.sha256(name, size: size)
        let dest = destination(name)
        let id = try cli.download(faults.url(name, size: size, ["drop": String(dropAt), "times": "1"]), to: dest,
                                  Self.retryOptions)
        try waitCompleted(id, timeout: 20)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let job = try cli.job(id)
        let log = job.attemptLog
        XCTAssertGreaterThanOrEqual(log.count, 2, "a failed attempt then a good one: \(job.jsonText)")
        if log.count >= 2 {
            XCTAssertNotNil(log[0]["error"].flatMap { $0 is NSNull ? nil : $0 }, "first attempt failed: \(job.jsonText)")
            let rangeStart = try XCTUnwrap(intField(log[1], "rangeStart"), job.jsonText)
            XCTAssertGreaterThan(rangeStart, 0, "bytes kept across the retry: \(job.jsonText)")
            XCTAssertLessThanOrEqual(rangeStart, dropAt, "no more than was received: \(job.jsonText)")
            XCTAssertEqual(intField(log[1], "httpStatus"), 206, job.jsonText)
            XCTAssertEqual(intField(log[1], "bytes"), size - rangeStart, "second attempt fetched the rest: \(job.jsonText)")
        }
        let gets = faults.awaitGets(name, count: 2)
        XCTAssertEqual(gets.first?["fault"] as? String, "drop", faults.describeLog())
        if gets.count >= 2 {
            XCTAssertNotNil(gets[1]["range"] as? String, "retry carries Range: \(faults.describeLog())")
            XCTAssertEqual(gets[1]["ifRange"] as? String, "\"\(name)-v1\"", "retry carries If-Range: \(faults.describeLog())")
            XCTAssertEqual(intField(gets[1], "status"), 206, faults.describeLog())
        }
    }

    /// A body shorter than its Content-Length is a failed attempt that is retried.
    func testShortBodyIsRetried() throws {
        let name = "short.bin"
        let size = 2 * MiB
        let sha = try faults.sha256(name, size: size)
        let dest = destination(name)
        let id = try cli.download(faults.url(name, size: size, ["short": "1", "times": "1"]), to: dest, Self.retryOptions)
        try waitCompleted(id, timeout: 20)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let job = try cli.job(id)
        XCTAssertGreaterThanOrEqual(job.attemptLog.count, 2, "short body must cost an attempt: \(job.jsonText)")
        let gets = faults.awaitGets(name, count: 2)
        XCTAssertEqual(gets.first?["fault"] as? String, "short", faults.describeLog())
    }

    /// 503 + Retry-After: 2 → waiting, and the next attempt is not before 2 s (NEW).
    func testRetryAfterIsHonoured() throws {
        let name = "busy.bin"
        let size = 1 * MiB
        let sha = try faults.sha256(name, size: size)
        let dest = destination(name)
        let id = try cli.download(faults.url(name, size: size, ["status": "503", "times": "1", "retry_after": "2"]),
                                  to: dest, Self.retryOptions)

        // Seen waiting (with a due time and a reason), or already past it.
        let seen = try cli.awaitJob(id, "waiting or a second attempt", timeout: 10) { job in
            job.state == "waiting" || job.attemptLog.count >= 2 || job.state == "completed"
        }
        if seen.state == "waiting" {
            XCTAssertNotNil(date(seen["nextAttemptAt"]), "nextAttemptAt while waiting: \(seen.jsonText)")
            XCTAssertNotNil(seen["stateReason"] as? String, "stateReason while waiting: \(seen.jsonText)")
        }
        try waitCompleted(id, timeout: 20)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let job = try cli.job(id)
        XCTAssertEqual(intField(job.attemptLog.first ?? [:], "httpStatus"), 503, job.jsonText)
        let gap = try gapAfterAttempt(0, in: job)
        XCTAssertGreaterThanOrEqual(gap, 1.9, "Retry-After: 2 honoured (NEW): \(job.jsonText)")
        XCTAssertLessThan(gap, 10, "and not much later: \(job.jsonText)")
    }

    /// A server's Retry-After near 2^63 seconds (or in the year 9223372036854775807) is held to the
    /// longest backoff (5 minutes), not multiplied past Int64 into a crash.
    func testAHugeRetryAfterIsCappedNotACrash() throws {
        for (name, value) in [("huge.bin", "9223372036854775807"), ("far.bin", "Sun,%2006%20Nov%209223372036854775807%2008:49:37%20GMT")] {
            let id = try cli.download(faults.url(name, size: 64 * KiB, ["status": "503", "times": "1", "retry_after": value]),
                                      to: destination(name), Self.retryOptions)
            let waiting = try cli.awaitState(id, "waiting", timeout: 10)
            let due = try XCTUnwrap(date(waiting["nextAttemptAt"]), waiting.jsonText)
            XCTAssertLessThan(due.timeIntervalSinceNow, 301, "capped at 5 minutes: \(waiting.jsonText)")
            XCTAssertTrue(daemon.isRunning, "transferd survived Retry-After: \(value)")
            XCTAssertEqual(cli.run(["retry", String(id)]).exitCode, 0)
            try waitCompleted(id)
        }
    }

    /// 503 + Retry-After: 30, then `retry ID` while waiting: the wait is skipped.
    func testRetryCommandSkipsTheWait() throws {
        try checkSkipsRetryAfterWait(verb: "retry", name: "skip-retry.bin")
    }

    /// Same with `resume ID`.
    func testResumeCommandSkipsTheWait() throws {
        try checkSkipsRetryAfterWait(verb: "resume", name: "skip-resume.bin")
    }

    private func checkSkipsRetryAfterWait(verb: String, name: String) throws {
        let size = 1 * MiB
        let sha = try faults.sha256(name, size: size)
        let dest = destination(name)
        let id = try cli.download(faults.url(name, size: size, ["status": "503", "times": "1", "retry_after": "30"]),
                                  to: dest, Self.retryOptions)

        let waiting = try cli.awaitState(id, "waiting", timeout: 10)
        let due = try XCTUnwrap(date(waiting["nextAttemptAt"]), "nextAttemptAt while waiting: \(waiting.jsonText)")
        XCTAssertGreaterThan(due.timeIntervalSinceNow, 20, "Retry-After: 30 sets the due time (NEW): \(waiting.jsonText)")

        let skipped = Date()
        let result = cli.run([verb, String(id)])
        XCTAssertEqual(result.exitCode, 0, "\(verb) on a waiting job: \(result.summary)")
        try waitCompleted(id, timeout: 15)
        XCTAssertLessThan(Date().timeIntervalSince(skipped), 10, "\(verb) skipped the 30 s wait")
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let job = try cli.job(id)
        let gap = try gapAfterAttempt(0, in: job)
        XCTAssertLessThan(gap, 10, "second attempt well before Retry-After's 30 s: \(job.jsonText)")
    }

    /// Headers and 64 KiB, then silence: `--stall-timeout 2` aborts and retries (NEW).
    func testStalledAttemptIsAbortedAndRetried() throws {
        try restartDaemon(with: ["--stall-timeout", "2"])

        let name = "stall.bin"
        let size = 2 * MiB
        let sha = try faults.sha256(name, size: size)
        let dest = destination(name)
        let id = try cli.download(faults.url(name, size: size, ["stall": "1", "times": "1"]), to: dest, Self.retryOptions)
        try waitCompleted(id, timeout: 20)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let job = try cli.job(id)
        let log = job.attemptLog
        XCTAssertGreaterThanOrEqual(log.count, 2, "the stalled attempt was retried: \(job.jsonText)")
        if let first = log.first, let started = date(first["startedAt"]), let ended = date(first["endedAt"]) {
            let lasted = ended.timeIntervalSince(started)
            XCTAssertGreaterThanOrEqual(lasted, 1.5, "aborted after the stall timeout, not before: \(job.jsonText)")
            // The server goes silent right after the first 64 KiB, so "no bytes for 2 s"
            // is due about 2 s after the start; allow slack, but not a multiple of it.
            XCTAssertLessThan(lasted, 4.5, "aborted about 2 s after the last byte (--stall-timeout 2): \(job.jsonText)")
        }
        let gets = faults.awaitGets(name, count: 2)
        XCTAssertEqual(gets.first?["fault"] as? String, "stall", faults.describeLog())
        XCTAssertTrue(poll(timeout: 5) { faults.gets(name).first?["clientClosed"] as? Bool == true },
                      "transferd closed the stalled connection: \(faults.describeLog())")
    }

    /// The ETag changes between attempts: restart from 0, end with the new entity only.
    func testAJobMakingProgressIsNotFailedForNeedingManyAttempts() throws {
        let name = "progress.bin"
        let size = 2 * MiB
        let sha = try faults.sha256(name, size: size)
        let dest = destination(name)
        // Four drops with one retry allowed: every attempt keeps bytes, so the job goes on.
        let id = try cli.download(faults.url(name, size: size, ["drop": String(256 * KiB), "times": "4"]), to: dest,
                                  ["--retry", "1"])
        try waitCompleted(id, timeout: 40)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        XCTAssertGreaterThanOrEqual(try cli.job(id).attemptLog.count, 5)
    }

    func testAJobWithoutProgressFailsAtTheDeadline() throws {
        try restartDaemon(with: ["--no-progress-timeout", "3"])
        let id = try cli.download(faults.url("never.bin", size: MiB, ["status": "503", "times": "100", "retry_after": "1"]),
                                  to: destination("never.bin"), ["--retry", "100"])
        let failed = try cli.awaitState(id, "failed", timeout: 20)
        XCTAssertTrue((failed["stateReason"] as? String)?.contains("no progress for 3 s") == true, failed.jsonText)
        XCTAssertEqual(failed.errorCode, "http_status", failed.jsonText)
        XCTAssertLessThan(failed.attemptLog.count, 10, "failed at the deadline, not after 100 retries: \(failed.jsonText)")
    }

    // MARK: uploads under the same faults

    func testUploadDroppedMidBodyIsSentAgainWhole() throws {
        let source = workDir.appendingPathComponent("up-drop.bin")
        try Files.randomData(count: MiB).write(to: source)
        let sha = try cli.sha256(of: source)
        let id = try cli.upload(faults.baseURL + "/upload/up-drop.bin?drop=262144&times=1", ["-T", source.path, "--retry", "3"])
        try waitCompleted(id, timeout: 20)
        let requests = try faults.uploads("up-drop.bin")
        XCTAssertEqual(requests.first?["fault"] as? String, "drop", "\(requests)")
        XCTAssertEqual(requests.filter { $0["complete"] as? Bool == true }.compactMap { $0["sha256"] as? String }, [sha],
                       "exactly one complete upload with the file's bytes: \(requests)")
    }

    func testUploadHonoursRetryAfter() throws {
        let source = workDir.appendingPathComponent("up-503.bin")
        try Files.randomData(count: 64 * KiB).write(to: source)
        let sha = try cli.sha256(of: source)
        let id = try cli.upload(faults.baseURL + "/upload/up-503.bin?status=503&retry_after=2&times=1",
                                ["-F", "file=@\(source.path)", "--retry", "3"])
        try waitCompleted(id, timeout: 20)
        let requests = try faults.uploads("up-503.bin")
        XCTAssertEqual(requests.count, 2, "\(requests)")
        let times = requests.compactMap { $0["time"] as? Double }
        if times.count == 2 { XCTAssertGreaterThanOrEqual(times[1] - times[0], 1.9, "Retry-After: 2 was honoured") }
        XCTAssertEqual(requests.last?["complete"] as? Bool, true, "\(requests)")
        XCTAssertNotEqual(requests.last?["sha256"] as? String, sha, "a multipart body is more than the file")
        XCTAssertEqual(try cli.job(id).state, "completed")
    }

    func testStalledUploadIsAbortedAndSentAgain() throws {
        try restartDaemon(with: ["--stall-timeout", "2"])
        let source = workDir.appendingPathComponent("up-stall.bin")
        try Files.randomData(count: 4 * MiB).write(to: source)
        let sha = try cli.sha256(of: source)
        let id = try cli.upload(faults.baseURL + "/upload/up-stall.bin?stall=1&times=1", ["-T", source.path, "--retry", "3"])
        try waitCompleted(id, timeout: 20)
        let job = try cli.job(id)
        XCTAssertEqual(job.attemptLog.first.flatMap { ($0["error"] as? [String: Any])?["code"] as? String }, "stalled", job.jsonText)
        let requests = try faults.uploads("up-stall.bin")
        XCTAssertEqual(requests.filter { $0["complete"] as? Bool == true }.compactMap { $0["sha256"] as? String }, [sha],
                       "\(requests)")
    }

    func testEntityChangedBetweenAttemptsEndsWithNewEntity() throws {
        let name = "changes.bin"
        let size = 2 * MiB
        let oldSha = try faults.sha256(name, size: size, version: 1)
        let newSha = try faults.sha256(name, size: size, version: 2)
        XCTAssertNotEqual(oldSha, newSha)
        let dest = destination(name)
        let url = faults.url(name, size: size, ["drop": String(1 * MiB), "times": "1", "change_after": "1"])
        let id = try cli.download(url, to: dest, Self.retryOptions)
        try waitCompleted(id, timeout: 20)
        try assertCompletedDownload(id, at: dest, sha256: newSha, size: size)

        let gets = faults.awaitGets(name, count: 2)
        XCTAssertEqual(intField(gets.last ?? [:], "version"), 2, faults.describeLog())
        if gets.count >= 2, gets[1]["range"] as? String != nil {
            XCTAssertEqual(gets[1]["ifRange"] as? String, "\"\(name)-v1\"", "If-Range guards the Range: \(faults.describeLog())")
            XCTAssertEqual(intField(gets[1], "status"), 200, "stale validator → whole entity: \(faults.describeLog())")
        }
        let job = try cli.job(id)
        XCTAssertEqual(intField(job.attemptLog.last ?? [:], "bytes"), size, "the last attempt fetched all of v2: \(job.jsonText)")
    }

    /// A server that ignores Range (200 to a ranged retry): restart from 0 in that attempt.
    func testServerIgnoringRangeAfterDropRestartsFromZero() throws {
        let name = "ignore.bin"
        let size = 2 * MiB
        let sha = try faults.sha256(name, size: size)
        let dest = destination(name)
        let url = faults.url(name, size: size, ["ignore_range": "1", "drop": String(1 * MiB), "times": "1"])
        let id = try cli.download(url, to: dest, Self.retryOptions)
        try waitCompleted(id, timeout: 20)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let gets = faults.awaitGets(name, count: 2)
        XCTAssertTrue(gets.allSatisfy { intField($0, "status") == 200 }, faults.describeLog())
        let job = try cli.job(id)
        let last = try XCTUnwrap(job.attemptLog.last, job.jsonText)
        XCTAssertEqual(intField(last, "httpStatus"), 200, job.jsonText)
        XCTAssertEqual(intField(last, "bytes"), size, "whole entity in the last attempt: \(job.jsonText)")
    }

    /// A trickle (200 kB/s) paused in the middle and resumed completes with Range.
    func testTricklePausedAndResumedCompletes() throws {
        let name = "trickle.bin"
        let size = 1 * MiB
        let sha = try faults.sha256(name, size: size)
        let dest = destination(name)
        let id = try cli.download(faults.url(name, size: size, ["rate": "200000"]), to: dest, Self.retryOptions)

        try awaitProgress(id, atLeast: 200 * KiB, total: size, timeout: 10)
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        let paused = try cli.awaitState(id, "paused", timeout: 5)
        let kept = try XCTUnwrap(paused.bytesDone, paused.jsonText)
        XCTAssertLessThan(kept, size, paused.jsonText)

        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id, timeout: 15)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let gets = faults.awaitGets(name, count: 2)
        XCTAssertGreaterThanOrEqual(gets.count, 2, faults.describeLog())
        if gets.count >= 2 {
            XCTAssertNotNil(gets[1]["range"] as? String, "resume sends Range: \(faults.describeLog())")
            XCTAssertEqual(intField(gets[1], "status"), 206, faults.describeLog())
        }
        let last = try XCTUnwrap(try cli.job(id).attemptLog.last)
        XCTAssertGreaterThan(intField(last, "rangeStart") ?? 0, 0, "resumed from kept bytes")
    }
}
