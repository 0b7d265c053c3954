import Foundation
import XCTest

/// What a newcomer from curl meets first (issue 61): a URL typed without a scheme, and a
/// failure the daemon's log must not bury among the routine lines.
final class FirstHourTests: IntegrationTestCase {
    /// `localhost:8080/f.bin`, which curl takes as http, was a cryptic "Unsupported number of slashes".
    func testAURLWithoutASchemeIsTakenAsHTTPWithANote() throws {
        let sha = try makeSource("plain.bin", size: 64 * KiB)
        let typed = String(nginx.url(.files, "plain.bin").dropFirst("http://".count))
        let dest = destination("plain.bin")
        let result = cli.run(["download", typed, "-o", dest.path])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertTrue(result.stderr.contains("names no scheme: taken as http://\(typed)"), result.stderr)
        let id = try XCTUnwrap(Int(result.trimmedStdout), result.summary)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: 64 * KiB)
        // A scheme written with one slash is libcurl's to judge, not one to guess.
        let wrong = cli.run(["download", "http:/127.0.0.1/x", "-o", destination("wrong.bin").path, "--paused"])
        XCTAssertFalse(wrong.stderr.contains("names no scheme"), wrong.summary)
    }

    /// The daemon logged a job's failure at info, beside every routine line.
    func testAFailedJobIsLoggedAsAWarningAndARetryIsNot() throws {
        let id = try cli.download(nginx.statusURL(404), to: destination("missing.bin"))
        XCTAssertNotEqual(cli.wait([id]).exitCode, 0)
        let log = daemon.logTail(lines: 200)
        XCTAssertTrue(log.contains("warn transferd: job \(id): attempt 1 failed: the server answered HTTP 404; now failed"), log)
    }
}
