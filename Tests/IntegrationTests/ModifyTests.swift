import Foundation
import XCTest

/// `modify`: a job that is not transferring takes a new URL, headers, limit, priority or
/// retries — checked, recorded, kept across a restart — and a download keeps its bytes when the
/// new URL serves the same entity.
final class ModifyTests: IntegrationTestCase {
    override class var slowRate: String { "1m" }

    func testAnExpiredURLIsReplacedAndTheBytesAreKept() throws {
        let size = 3 * MiB
        let sha = try makeSource("big.bin", size: size)
        let id = try cli.download(nginx.url(.slow, "big.bin"), to: destination("big.bin"), ["-H", "X-Old: 1"])
        let paused = try pauseAfterProgress(id, atLeast: 512 * KiB)
        let kept = try XCTUnwrap(paused.bytesDone)

        // The same file at another URL (nginx gives it the same ETag): continued with a Range.
        let result = cli.run(["modify", String(id), "--url", nginx.url(.files, "big.bin"), "-H", "X-New: 2",
                              "--remove-header", "x-old", "--priority", "high", "--retry", "3", "--limit-rate", "off"])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertEqual(result.stdout, "job \(id) modified\n")
        let modified = try cli.job(id)
        XCTAssertEqual(modified["url"] as? String, nginx.url(.files, "big.bin"), modified.jsonText)
        XCTAssertEqual(modified["headers"] as? [String], ["X-New: 2"], modified.jsonText)
        XCTAssertEqual(modified["priority"] as? String, "high")
        XCTAssertEqual(jsonInt(modified["maxRetries"]), 3)
        XCTAssertEqual(modified.bytesDone, kept, "the bytes are kept")
        let events = cli.run(["events"])
        XCTAssertTrue(events.stdout.contains("job \(id)  modified: url, headers, limit, priority high, retries 3"), events.stdout)

        try daemon.restart()
        XCTAssertEqual(try cli.job(id)["url"] as? String, nginx.url(.files, "big.bin"), "recorded")
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: destination("big.bin"), sha256: sha, size: size)
        let log = try String(contentsOf: nginx.accessLog, encoding: .utf8)
        let continued = log.split(separator: "\n").filter { $0.hasPrefix("GET /files/big.bin") }
        XCTAssertTrue(continued.last?.contains("|206|") == true && continued.last?.contains("bytes=\(kept)-") == true,
                      "the new URL was asked for the rest: \(continued)")
    }

    func testAFailedJobTakesANewURLAndIsRetried() throws {
        let sha = try makeSource("there.bin", size: 64 * KiB)
        let id = try cli.download(nginx.url(.files, "missing.bin"), to: destination("there.bin"))
        let failed = try cli.awaitState(id, "failed")
        XCTAssertEqual(failed.httpStatus, 404, failed.jsonText)
        XCTAssertEqual(cli.run(["modify", String(id), "--url", nginx.url(.files, "there.bin")]).exitCode, 0)
        XCTAssertEqual(cli.run(["retry", String(id)]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: destination("there.bin"), sha256: sha, size: 64 * KiB)
    }

    func testWhatCannotBeModifiedIsRefused() throws {
        try makeSource("slow.bin", size: 3 * MiB)
        let running = try cli.download(nginx.url(.slow, "slow.bin"), to: destination("slow.bin"))
        try awaitProgress(running, atLeast: 64 * KiB, total: 3 * MiB)
        let busy = cli.run(["modify", String(running), "--priority", "low"])
        XCTAssertEqual(busy.exitCode, 1, busy.summary)
        XCTAssertEqual(busy.stderr, "transferctl: cannot modify job \(running): it is running (pause it first)\n")
        XCTAssertEqual(cli.run(["cancel", String(running)]).exitCode, 0)
        try cli.awaitState(running, "cancelled")
        let ended = cli.run(["modify", String(running), "--priority", "low"])
        XCTAssertEqual(ended.exitCode, 1, ended.summary)
        XCTAssertTrue(ended.stderr.contains("it is cancelled"), ended.summary)

        let paused = try cli.download(nginx.url(.files, "slow.bin"), to: destination("p.bin"), ["--paused"])
        for (arguments, words) in [(["--url", "ftp://example.com/x"], "unsupported URL scheme"),
                                   (["-H", "no colon"], "Name: value"), (["--retry", "-1"], "retr"), ([], "something to change")] {
            let refused = cli.run(["modify", String(paused)] + arguments)
            XCTAssertEqual(refused.exitCode, 2, refused.summary)
            XCTAssertTrue(refused.stderr.contains(words), "\(arguments): \(refused.summary)")
        }
        XCTAssertEqual(cli.run(["modify", "999", "--priority", "low"]).exitCode, 1)
        XCTAssertEqual(try cli.job(paused)["url"] as? String, nginx.url(.files, "slow.bin"), "nothing changed")
    }

    /// Pauses the job once it has moved `atLeast` bytes; the paused job.
    @discardableResult
    private func pauseAfterProgress(_ id: Int, atLeast bytes: Int) throws -> JobJSON {
        try awaitProgress(id, atLeast: bytes, total: 3 * MiB)
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        return try cli.awaitState(id, "paused")
    }
}
