import Foundation
import XCTest

/// Numbers near 2^63 from the command line, the socket, a manifest, the daemon's options and the
/// database (docs/cli.md, "Limits"): each is refused with one line (exit 2, `invalid_argument`)
/// or, stored, fails only its own job (`invalid_job`); the daemon never crashes, at once or at
/// its next start.
final class NumericLimitTests: IntegrationTestCase {
    static let huge = "9223372036854775807"

    private var database: String { daemon.stateDir.appendingPathComponent("transfers.db").path }

    /// Runs SQL on the (stopped) daemon's database with the sqlite3 command-line tool.
    private func sqlite(_ sql: String) throws {
        let result = cli.runner.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [database, sql], timeout: 10)
        guard result.exitCode == 0 else { throw HarnessError("sqlite3: \(result.summary)") }
    }

    /// Sends one request line on the control socket and returns the answer's `error.code` (nil when ok).
    private func requestErrorCode(_ line: String, file: StaticString = #filePath, line number: UInt = #line) throws -> String? {
        let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 10)
        defer { connection.closeConnection() }
        connection.send(Data((line + "\n").utf8))
        guard case .line(let reply) = connection.readReply() else {
            XCTFail("no answer to \(line)", file: file, line: number)
            return nil
        }
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
        if object["ok"] as? Bool == true { return nil }
        return (object["error"] as? [String: Any])?["code"] as? String
    }

    private func assertServing(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(daemon.isRunning, "transferd is still running; log:\n\(daemon.logTail())", file: file, line: line)
        let stats = cli.run(["stats"], timeout: 5)
        XCTAssertEqual(stats.exitCode, 0, stats.summary, file: file, line: line)
    }

    private func assertUsageError(_ arguments: [String], mentioning word: String,
                                  file: StaticString = #filePath, line: UInt = #line) {
        let result = cli.run(arguments)
        XCTAssertEqual(result.exitCode, 2, result.summary, file: file, line: line)
        assertOneLineMessage(result.stderr, result.command, file: file, line: line)
        XCTAssertTrue(result.stderr.contains(word), "the message names \(word): \(result.summary)", file: file, line: line)
    }

    func testHugeNumbersOnTheCommandLineAreUsageErrors() throws {
        let url = nginx.url(.files, "x.bin")
        assertUsageError(["download", url, "-o", destination("a").path, "--retry", Self.huge, "--paused"], mentioning: "--retry")
        assertUsageError(["download", url, "-o", destination("a").path, "--retry", "1001", "--paused"], mentioning: "1000")
        assertUsageError(["download", url, "-o", destination("a").path, "--limit-rate", Self.huge], mentioning: "rate")
        assertUsageError(["download", url, "-o", destination("a").path, "--batch", "9223372036854775808"], mentioning: "--batch")
        assertUsageError(["limit", "--down", Self.huge], mentioning: "rate")
        assertUsageError(["limit", "1", "2000G"], mentioning: "rate")
        assertUsageError(["list", "--limit", Self.huge], mentioning: "--limit")
        assertUsageError(["wait", "--all", "--timeout", "1e300"], mentioning: "--timeout")
        assertServing()
        XCTAssertEqual(try cli.jobs().count, 0, "nothing was queued")
    }

    func testHugeNumbersOnTheSocketAreInvalidArguments() throws {
        let job = #"{"kind":"download","url":"http://127.0.0.1:1/x","path":"\#(destination("s").path)","headers":[],"overwrite":false,"priority":"normal","paused":true"#
        for request in [
            #"{"version":1,"command":"add","job":\#(job),"retries":\#(Self.huge)}}"#,
            #"{"version":1,"command":"add","job":\#(job),"limit":\#(Self.huge)}}"#,
            #"{"version":1,"command":"add","job":\#(job),"batch":-1}}"#,
            #"{"version":1,"command":"limit","down":\#(Self.huge)}"#,
            #"{"version":1,"command":"limit","up":-9223372036854775808}"#,
            #"{"version":1,"command":"list","limit":-1}"#,
            #"{"version":1,"command":"show","ids":[-1]}"#,
        ] {
            XCTAssertEqual(try requestErrorCode(request), "invalid_argument", request)
        }
        // A job's limit near 2^63 once it exists: refused, and the job keeps running within its old one.
        let id = try cli.download(nginx.url(.files, "x.bin"), to: destination("x.bin"), ["--paused"])
        XCTAssertEqual(try requestErrorCode(#"{"version":1,"command":"limit","ids":[\#(id)],"rate":\#(Self.huge)}"#),
                       "invalid_argument")
        XCTAssertTrue(try cli.job(id)["limit"] is NSNull, "the limit was not changed")
        assertServing()
    }

    func testAManifestWithAHugeLimitRateOrRetryIsRefusedByLine() throws {
        try makeSource("m.bin", size: 64 * KiB)
        for field in [#""limitRate":100000000000000000"#, #""retry":9223372036854775807"#] {
            let manifest = try cli.writeManifest([
                manifestLine(key: "a", download: ["url": nginx.url(.files, "m.bin"), "output": destination("m1").path]),
                #"{"download":{"url":"\#(nginx.url(.files, "m.bin"))","output":"\#(destination("m2").path)",\#(field)}}"#,
            ], to: workDir.appendingPathComponent("manifest.jsonl"))
            let result = cli.run(["batch", "submit", manifest.path])
            XCTAssertEqual(result.exitCode, 2, result.summary)
            assertOneLineMessage(result.stderr, result.command)
            XCTAssertTrue(result.stderr.contains("manifest.jsonl:2: "), "the message names the line: \(result.summary)")
        }
        assertServing()
        XCTAssertEqual(try cli.jobs().count, 0, "all or nothing: no line was queued")
    }

    func testResumeDataWithHugeNumbersIsRefused() throws {
        let document = workDir.appendingPathComponent("resume.json")
        try Data(#"{"version":1,"url":"\#(nginx.url(.files, "r.bin"))","path":"\#(destination("r.bin").path)","partialPath":"\#(Files.partialPath(for: destination("r.bin")).path)","bytesReceived":\#(Self.huge),"bytesTotal":null,"headers":[]}"#.utf8)
            .write(to: document)
        assertUsageError(["download", "--resume-data", document.path], mentioning: "bytesReceived")
        assertServing()
    }

    func testTheDaemonRefusesTimeoutsAndCountsPastTheirLimits() throws {
        let stateDir = workDir.appendingPathComponent("other-state").path
        for option in ["--hook-timeout", "--no-progress-timeout", "--stall-timeout", "--retry", "--max-active"] {
            let result = cli.runner.run(binaries.transferd, ["--state-dir", stateDir, option, Self.huge], timeout: 10)
            XCTAssertEqual(result.exitCode, 2, "\(option): \(result.summary)")
            assertOneLineMessage(result.stderr, result.command)
            XCTAssertTrue(result.stderr.contains(option), result.summary)
        }
    }

    /// An upload of a file whose mtime is past 2262 (nanoseconds past Int64) is queued, not a crash.
    func testAFileFromTheFarFutureCanBeUploaded() throws {
        let file = workDir.appendingPathComponent("future.txt")
        try Data("from the future".utf8).write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 32_503_680_000)],
                                              ofItemAtPath: file.path)
        let result = cli.run(["upload", "http://127.0.0.1:1/up", "-T", file.path, "--paused"])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        assertServing()
    }

    /// Each bad row, stored with sqlite3 into the stopped daemon's database: the daemon starts,
    /// fails that job with `invalid_job` naming the column, keeps the good job, and answers; it
    /// starts again as well (no crash loop), and a quarantined job is not retried.
    func testEachBadStoredRowFailsItsJobAtStartAndTheDaemonServes() throws {
        let edits: [(column: String, sql: String)] = [
            ("max_retries", "UPDATE jobs SET max_retries = \(Self.huge) WHERE id = ID"),
            ("limit_rate", "UPDATE jobs SET limit_rate = 100000000000000000 WHERE id = ID"),
            ("bytes_done", "UPDATE jobs SET bytes_done = -1 WHERE id = ID"),
            ("attempts", "UPDATE jobs SET attempts = 'many' WHERE id = ID"),
            ("next_attempt_at", "UPDATE jobs SET state = 'waiting', next_attempt_at = \(Self.huge) WHERE id = ID"),
            ("created_at", "UPDATE jobs SET state = 'running', created_at = 1e300 WHERE id = ID"),
            ("state", "PRAGMA ignore_check_constraints = ON; UPDATE jobs SET state = 'bogus' WHERE id = ID"),
            ("kind", "PRAGMA ignore_check_constraints = ON; UPDATE jobs SET kind = 'ftp' WHERE id = ID"),
            ("headers", "UPDATE jobs SET headers = '[\"X-A: 1\"' WHERE id = ID"),
            ("tls", "UPDATE jobs SET tls = 'null!' WHERE id = ID"),
            ("resume_data.bytes_durable",
             "INSERT INTO resume_data (job_id, partial_path, bytes_durable) VALUES (ID, '/tmp/p', \(Self.huge))"),
        ]
        var ids: [(Int, String)] = []
        for (index, edit) in edits.enumerated() {
            let id = try cli.download(nginx.url(.files, "x\(index).bin"), to: destination("x\(index).bin"), ["--paused"])
            ids.append((id, edit.column))
        }
        try makeSource("good.bin", size: 64 * KiB)
        let good = try cli.download(nginx.url(.files, "good.bin"), to: destination("good.bin"), ["--paused"])
        XCTAssertTrue(daemon.terminate())
        for ((id, _), edit) in zip(ids, edits) {
            try sqlite(edit.sql.replacingOccurrences(of: "ID", with: String(id)))
        }
        try sqlite("INSERT OR REPLACE INTO settings (key, value) VALUES ('limit_down', '\(Self.huge)')")

        try daemon.start()
        assertServing()
        for (id, column) in ids {
            let job = try cli.job(id)
            XCTAssertEqual(job.state, "failed", "\(column): \(job.jsonText)")
            XCTAssertEqual(job.errorCode, "invalid_job", "\(column): \(job.jsonText)")
            XCTAssertTrue(job.errorMessage?.contains(column) == true, "the message names \(column): \(job.jsonText)")
        }
        XCTAssertEqual(try cli.job(good).state, "paused", "a good job is left alone")
        let retry = cli.run(["retry", String(ids[0].0)])
        XCTAssertEqual(retry.exitCode, 1, "a quarantined job is not retried: \(retry.summary)")
        assertOneLineMessage(retry.stderr, retry.command)
        XCTAssertEqual(cli.run(["cancel", String(ids[1].0)]).exitCode, 0, "a quarantined job can be cancelled")
        XCTAssertTrue(daemon.logTail(lines: 200).contains("limit_down"), "the ignored setting is logged")

        try daemon.restart()
        assertServing()
        XCTAssertEqual(try cli.job(ids[0].0).errorCode, "invalid_job")
        XCTAssertEqual(cli.run(["resume", String(good)]).exitCode, 0)
        try waitCompleted(good)
    }
}
