import Foundation
import XCTest

/// `--header-command`: credentials asked for before each attempt, asked for again once after a
/// 401, and never shown anywhere.
final class HeaderCommandTests: IntegrationTestCase {
    /// A command that prints the token in `file` and leaves `next` there for the next run.
    private func rotatingCommand(_ file: URL, next: String) -> String {
        "t=$(cat '\(file.path)'); echo \(next) > '\(file.path)'; printf 'Authorization: Bearer %s\\n' \"$t\"; echo 'X-Attempt: '$TRANSFERD_ATTEMPT"
    }

    func testA401AsksTheCommandAgainOnceAndTheTokenIsNeverShown() throws {
        let sha = try makeSource("secret.bin", size: 128 * KiB)
        let token = workDir.appendingPathComponent("token")
        try Data("stale\n".utf8).write(to: token)
        let id = try cli.download(nginx.url(.bearer, "secret.bin"), to: destination("secret.bin"),
                                  ["--header-command", rotatingCommand(token, next: "good")])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: destination("secret.bin"), sha256: sha, size: 128 * KiB)
        let job = try cli.job(id)
        XCTAssertEqual(job.attempts, 2, "a 401, then new credentials: \(job.jsonText)")
        let log = try String(contentsOf: nginx.accessLog, encoding: .utf8).split(separator: "\n").filter { $0.contains("/bearer/") }
        XCTAssertEqual(log.map { $0.split(separator: "|")[1] }, ["401", "200"], "\(log)")

        // show --curl pipes the command's headers into curl: run as printed, it gets the file.
        let token2 = workDir.appendingPathComponent("token")
        try Data("good\n".utf8).write(to: token2)
        let curlLine = cli.run(["show", String(id), "--curl"]).trimmedStdout
        XCTAssertTrue(curlLine.hasPrefix("sh -c ") && curlLine.contains("| curl ") && curlLine.contains("-H @-"), curlLine)
        let viaCurl = workDir.appendingPathComponent("via-curl.bin")
        let runner = try CommandRunner(scratch: workDir.appendingPathComponent("curl-run"))
        let ran = runner.run(URL(fileURLWithPath: "/bin/sh"),
                             ["-c", curlLine.replacingOccurrences(of: "--output " + (job["partialPath"] as? String ?? "?"),
                                                                  with: "--output " + viaCurl.path)], timeout: 20)
        XCTAssertEqual(ran.exitCode, 0, ran.summary)
        XCTAssertEqual(try cli.sha256(of: viaCurl), sha, "curl fetched it with the command's headers")

        var everything = [job.jsonText, cli.run(["show", String(id)]).stdout, cli.run(["show", String(id), "--curl"]).stdout,
                          cli.run(["--json", "events"]).stdout, cli.run(["list"]).stdout]
        everything.append(try String(contentsOf: daemon.logURL, encoding: .utf8))
        for text in everything {
            XCTAssertFalse(text.contains("Bearer stale") || text.contains("Bearer good"), "a token leaked: \(text)")
        }
    }

    func testACommandThatFailsFailsTheJobAsAuthWithoutARequest() throws {
        try makeSource("never.bin", size: 1 * KiB)
        let id = try cli.download(nginx.url(.bearer, "never.bin"), to: destination("never.bin"),
                                  ["--header-command", "echo 'Authorization: Bearer good'; exit 3"])
        let failed = try cli.awaitState(id, "failed")
        XCTAssertEqual(failed.errorCode, "auth", failed.jsonText)
        XCTAssertEqual(failed.errorMessage, "--header-command exited with status 3", failed.jsonText)
        XCTAssertLessThanOrEqual(failed.attempts ?? 9, 1, "not retried: \(failed.jsonText)")
        let bad = try cli.download(nginx.url(.bearer, "never.bin"), to: destination("bad.bin"),
                                   ["--header-command", "echo 'Authorization Bearer good'"])
        let malformed = try cli.awaitState(bad, "failed")
        XCTAssertEqual(malformed.errorMessage, "--header-command printed line 1, which is not a 'Name: value' header", malformed.jsonText)
        let log = try String(contentsOf: nginx.accessLog, encoding: .utf8)
        XCTAssertFalse(log.contains("never.bin"), "no request without credentials: \(log)")
    }

    func testCredentialsRefusedTwiceFailTheJob() throws {
        try makeSource("locked.bin", size: 1 * KiB)
        let token = workDir.appendingPathComponent("always-stale")
        try Data("stale\n".utf8).write(to: token)
        let id = try cli.download(nginx.url(.bearer, "locked.bin"), to: destination("locked.bin"),
                                  ["--header-command", rotatingCommand(token, next: "stale")])
        let failed = try cli.awaitState(id, "failed")
        XCTAssertEqual(failed.httpStatus, 401, failed.jsonText)
        XCTAssertEqual(failed.attempts, 2, "asked once more, then failed: \(failed.jsonText)")
    }
}
