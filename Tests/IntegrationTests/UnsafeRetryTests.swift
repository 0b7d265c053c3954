import Foundation
import XCTest

/// POST is not idempotent: every attempt carries the job's one Idempotency-Key, and an attempt
/// is retried only when the server cannot have acted on it (no connection, a body cut off, 408,
/// 429, 503), unless the job was queued with --retry-unsafe. Against `Harness/fault_server.py`,
/// whose `/upload/NAME` logs every request with its body count and Idempotency-Key.
final class UnsafeRetryTests: FaultServerTestCase {
    // MARK: helpers

    /// A file of `size` random bytes to send, and its sha256.
    private func body(_ name: String, size: Int) throws -> (url: URL, sha256: String) {
        let url = workDir.appendingPathComponent(name)
        try Files.randomData(count: size).write(to: url)
        return (url, try cli.sha256(of: url))
    }

    /// `upload FAULTS/upload/NAME?QUERY -T FILE --method POST OPTIONS...`
    private func post(_ name: String, _ query: String, _ file: URL, _ options: [String] = []) throws -> Int {
        let result = cli.run(["upload", faults.baseURL + "/upload/\(name)?\(query)", "-T", file.path, "--method", "POST",
                              "--retry", "3"] + options)
        guard result.exitCode == 0, let id = Int(result.trimmedStdout) else {
            throw HarnessError("upload did not print a job id: \(result.summary)")
        }
        return id
    }

    /// The Idempotency-Key header value the job's attempts send: its key as an sf-string.
    private func keyHeader(_ id: Int) throws -> String {
        let job = try cli.job(id)
        let key = try XCTUnwrap(job["idempotencyKey"] as? String, "a POST job has a key: \(job.jsonText)")
        XCTAssertNotNil(UUID(uuidString: key), "a random UUID: \(key)")
        return "\"\(key)\""
    }

    /// Fails the job's single attempt as not retried because the server may have acted on it.
    private func assertFailedAsUnsafe(_ id: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let job = try cli.awaitState(id, "failed", timeout: 15)
        XCTAssertEqual(job.attemptLog.count, 1, "never retried: \(job.jsonText)", file: file, line: line)
        XCTAssertEqual(job.attemptLog.first?["notRetried"] as? String, "unsafe_method", job.jsonText, file: file, line: line)
        XCTAssertTrue((job.stateReason ?? "").contains("--retry-unsafe"), "the reason says how: \(job.jsonText)",
                      file: file, line: line)
        let shown = cli.run(["show", String(id)])
        XCTAssertTrue(shown.stdout.contains("not retried: the server may have acted on the request"), shown.summary,
                      file: file, line: line)
    }

    // MARK: tests

    func testAPostAnswered503IsRetriedWithOneIdempotencyKey() throws {
        let (file, sha) = try body("p503.bin", size: 256 * KiB)
        let id = try post("p503.bin", "status=503&times=2", file)
        try waitCompleted(id, timeout: 20)
        let requests = try faults.uploads("p503.bin")
        XCTAssertEqual(requests.map { jsonInt($0["status"]) }, [503, 503, 201], "\(requests)")
        let key = try keyHeader(id)
        XCTAssertEqual(requests.map { $0["idempotencyKey"] as? String }, Array(repeating: key, count: requests.count),
                       "every attempt carries the job's one key: \(requests)")
        XCTAssertEqual(requests.last?["sha256"] as? String, sha, "\(requests)")
    }

    func testAPostCutOffBeforeItsLastByteIsRetried() throws {
        // Under a limit, the body is still far from its last byte when the server hangs up
        // (otherwise socket buffers could hold all of it).
        let (file, sha) = try body("pcut.bin", size: 2 * MiB)
        let id = try post("pcut.bin", "drop=65536&times=1", file, ["--limit-rate", "2M"])
        try waitCompleted(id, timeout: 20)
        let requests = try faults.uploads("pcut.bin")
        XCTAssertEqual(requests.count, 2, "\(requests)")
        XCTAssertEqual(requests.first?["fault"] as? String, "drop", "\(requests)")
        XCTAssertEqual(Set(requests.compactMap { $0["idempotencyKey"] as? String }), [try keyHeader(id)], "\(requests)")
        XCTAssertEqual(requests.last?["sha256"] as? String, sha, "\(requests)")
    }

    func testAPostAnswered500AfterItsWholeBodyFailsTheJob() throws {
        let size = 256 * KiB
        let (file, sha) = try body("p500.bin", size: size)
        let id = try post("p500.bin", "status=500&times=9", file)
        try assertFailedAsUnsafe(id)
        let requests = try faults.uploads("p500.bin")
        XCTAssertEqual(requests.count, 1, "the server saw the POST exactly once: \(requests)")
        XCTAssertEqual(jsonInt(requests.first?["bytesReceived"]), size, "its whole body: \(requests)")
        XCTAssertEqual(requests.first?["sha256"] as? String, sha, "\(requests)")
        XCTAssertEqual(try cli.job(id).httpStatus, 500)
    }

    func testAPostWhoseAnswerIsLostAfterItsWholeBodyFailsTheJob() throws {
        let size = 256 * KiB
        let (file, _) = try body("plost.bin", size: size)
        let id = try post("plost.bin", "drop=\(size)&times=9", file)
        try assertFailedAsUnsafe(id)
        let requests = try faults.uploads("plost.bin")
        XCTAssertEqual(requests.count, 1, "\(requests)")
        XCTAssertEqual(jsonInt(requests.first?["bytesReceived"]), size, "\(requests)")
        XCTAssertEqual(try cli.job(id).errorCode, "network")
    }

    func testRetryUnsafeRetriesAPostAnswered500() throws {
        let (file, sha) = try body("punsafe.bin", size: 256 * KiB)
        let id = try post("punsafe.bin", "status=500&times=1", file, ["--retry-unsafe"])
        try waitCompleted(id, timeout: 20)
        let job = try cli.job(id)
        XCTAssertEqual(job["retryUnsafe"] as? Bool, true, job.jsonText)
        let requests = try faults.uploads("punsafe.bin")
        XCTAssertEqual(requests.map { jsonInt($0["status"]) }, [500, 201], "\(requests)")
        XCTAssertEqual(Set(requests.compactMap { $0["idempotencyKey"] as? String }), [try keyHeader(id)], "\(requests)")
        XCTAssertEqual(requests.last?["sha256"] as? String, sha, "\(requests)")

        // The manifest field does the same.
        let manifest = try cli.writeManifest([
            manifestLine(key: "u", upload: ["url": faults.baseURL + "/upload/m.bin", "file": file.path, "method": "POST",
                                            "retryUnsafe": true, "paused": true]),
        ], to: workDir.appendingPathComponent("unsafe.jsonl"))
        let batch = try XCTUnwrap(jsonInt(try cli.submit(manifest)["batch"]))
        let queued = try XCTUnwrap(try cli.jobs().first { jsonInt($0["batch"]) == batch })
        XCTAssertEqual(queued["retryUnsafe"] as? Bool, true, queued.jsonText)
    }

    /// The key is drawn when the job is queued and stored with it: the attempt after a restart
    /// sends it; a key given with -H is sent instead of one of ours.
    func testTheKeyOutlivesARestartAndTheUsersOwnKeyWins() throws {
        let (file, _) = try body("prestart.bin", size: 64 * KiB)
        let id = try post("prestart.bin", "", file, ["--paused"])
        let key = try keyHeader(id)
        try daemon.restart()
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id)
        XCTAssertEqual(try faults.uploads("prestart.bin").map { $0["idempotencyKey"] as? String }, [key])

        let own = try post("pown.bin", "", file, ["-H", "Idempotency-Key: mine-1"])
        try waitCompleted(own)
        XCTAssertTrue(try cli.job(own)["idempotencyKey"] is NSNull, "no key of ours beside the user's")
        XCTAssertEqual(try faults.uploads("pown.bin").map { $0["idempotencyKey"] as? String }, ["mine-1"])

        let put = try XCTUnwrap(Int(cli.run(["upload", faults.baseURL + "/upload/pput.bin", "-T", file.path]).trimmedStdout))
        try waitCompleted(put)
        XCTAssertEqual(try faults.uploads("pput.bin").map { $0["idempotencyKey"] is NSNull }, [true], "PUT is idempotent")
    }
}
