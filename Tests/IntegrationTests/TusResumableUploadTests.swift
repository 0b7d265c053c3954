import Foundation
import XCTest

/// `upload URL -T FILE --tus` against a real tus 1.0 server (tuspyserver under uvicorn): the
/// upload's URL is recorded before its first byte, and every interruption (kill -9 of the
/// daemon, pause, the server going away, an expired upload) continues from the offset the
/// server reports, so the server receives little more than the file. Bytes are counted on the
/// server's side (its PATCH bodies as received).
final class TusResumableUploadTests: TusTestCase {
    /// The engine's default PATCH size.
    let chunk = 32 * MiB

    private func upload(_ file: URL, _ options: [String] = []) throws -> Int {
        try cli.upload(tus.endpoint, ["-T", file.path, "--tus"] + options)
    }

    /// The one upload on the server holds the file whole, named and typed by it.
    @discardableResult
    private func assertOnServer(_ file: URL, sha256: String, size: Int, filename: String? = nil,
                                line: UInt = #line) throws -> TusUpload {
        let all = try tus.uploads()
        let upload = try XCTUnwrap(all.first { $0.offset == Int64(size) }, "no complete upload on the server: \(all)", line: line)
        XCTAssertEqual(upload.size, Int64(size), line: line)
        XCTAssertEqual(try tus.sha256(of: upload.id), sha256, "the server's copy differs from the file", line: line)
        XCTAssertEqual(upload.metadata["filename"], filename ?? file.lastPathComponent, line: line)
        XCTAssertNotNil(upload.metadata["filetype"], line: line)
        return upload
    }

    func testAnUploadIsCreatedThenSentInChunksAndShowsItsProtocol() throws {
        let size = 3 * MiB + 17
        let (file, sha) = try makeLargeFile("small one.bin", size: size)
        let id = try upload(file, ["--chunk-size", "1M"])
        try waitCompleted(id)
        let job = try cli.job(id)
        XCTAssertEqual(job.bytesDone, size, job.jsonText)
        XCTAssertEqual((job["remote"] as? [String: Any])?["kind"] as? String, "tus", job.jsonText)
        try assertOnServer(file, sha256: sha, size: size)
        let stats = try tus.stats()
        XCTAssertEqual(stats.requests("POST"), 1, "one upload created")
        XCTAssertEqual(stats.requests("PATCH"), 4, "3 MiB + 17 bytes in 1 MiB chunks")
        XCTAssertEqual(stats.patchBytes, Int64(size), "every byte sent once")
        XCTAssertEqual(stats.requests("HEAD"), 0, "a new upload asks no offset")
        let shown = cli.run(["show", String(id)])
        XCTAssertTrue(shown.stdout.contains("tus 1.0"), shown.stdout)
    }

    /// The issue's measure: kill -9 at ~20 %, ~50 % and ~80 % of 1 GiB, restarted each time.
    func testKillNineAtThreePointsOfAGibibyteContinuesFromTheServersOffset() throws {
        let size = 1024 * MiB
        let (file, sha) = try makeLargeFile("one-gib.bin", size: size)
        let id = try upload(file)
        let shown = try interrupt(id, size: size, at: [0.2, 0.5, 0.8]) { _ in
            daemon.kill9()
            try restartDaemon()
        }
        try waitCompleted(id, timeout: 120)
        try assertOnServer(file, sha256: sha, size: size)
        let stats = try tus.stats()
        let extra = stats.patchBytes - Int64(size)
        print("tus kill -9 ×3 of 1 GiB at \(shown.map { "\($0 / MiB) MiB" }): the server received \(stats.patchBytes) PATCH bytes, "
            + "\(extra) beyond the file (\(stats.requests("HEAD")) HEADs, \(stats.requests("PATCH")) PATCHes, \(stats.requests("POST")) POST)")
        XCTAssertEqual(stats.requests("POST"), 1, "the recorded upload was continued, never created again")
        XCTAssertGreaterThanOrEqual(stats.requests("HEAD"), 3, "each restart asks the server for its offset")
        XCTAssertLessThanOrEqual(extra, Int64(3 * chunk), "at most a chunk in flight per kill was sent twice")
        XCTAssertEqual(try cli.job(id).bytesDone, size)
    }

    func testPauseAndResumeContinueFromTheServersOffset() throws {
        let size = 96 * MiB
        let (file, sha) = try makeLargeFile("paused.bin", size: size)
        let id = try upload(file, ["--limit-rate", "40M"])
        // Past the first chunk: the server has acknowledged 32 MiB; what the interrupted PATCH
        // delivered after them the server keeps too, and tells the next attempt.
        try interrupt(id, size: size, at: [0.5]) { _ in
            XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
            _ = try cli.awaitState(id, "paused")
        }
        let paused = try cli.job(id)
        let server = try XCTUnwrap(try tus.uploads().first)
        let acknowledged = try XCTUnwrap(paused.bytesDone)
        XCTAssertEqual(acknowledged, chunk, "a paused job shows what the server last acknowledged: \(paused.jsonText)")
        XCTAssertGreaterThan(server.offset, Int64(acknowledged), "the interrupted PATCH's bytes stay on the server")
        let shown = cli.run(["show", String(id)])
        XCTAssertTrue(shown.stdout.contains("continues from byte \(acknowledged), as the server reports"), shown.stdout)
        XCTAssertFalse(shown.stdout.contains("from the first byte again"), "a tus upload does not start over: \(shown.stdout)")
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 60)
        try assertOnServer(file, sha256: sha, size: size)
        let stats = try tus.stats()
        XCTAssertEqual(stats.requests("HEAD"), 1, "the resumed attempt asked the server for its offset: \(stats)")
        XCTAssertLessThanOrEqual(stats.patchBytes - Int64(size), Int64(chunk), "a pause sends little twice: \(stats)")
    }

    func testTheServerGoingAwayMakesTheJobWaitThenContinue() throws {
        let size = 128 * MiB
        let (file, sha) = try makeLargeFile("offline.bin", size: size)
        let id = try upload(file, ["--limit-rate", "32M"])
        try interrupt(id, size: size, at: [0.4]) { _ in tus.stop() }
        let waiting = try cli.awaitJob(id, "waiting or queued for the server", timeout: 30) { ["waiting", "queued"].contains($0.state ?? "") }
        XCTAssertNotEqual(waiting.state, "failed", waiting.jsonText)
        try tus.start(samePort: true)
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 90)
        let upload = try assertOnServer(file, sha256: sha, size: size)
        XCTAssertEqual(try tus.uploads().count, 1, "the same upload continued: \(upload.id)")
        let stats = try tus.stats()
        XCTAssertLessThanOrEqual(stats.patchBytes - Int64(size), Int64(2 * chunk), "\(stats)")
    }

    func testCancelDeletesTheUploadOnTheServer() throws {
        let size = 64 * MiB
        let (file, _) = try makeLargeFile("cancelled.bin", size: size)
        let id = try upload(file, ["--limit-rate", "16M"])
        try interrupt(id, size: size, at: [0.1]) { _ in
            XCTAssertEqual(cli.run(["cancel", String(id)]).exitCode, 0)
        }
        XCTAssertTrue(poll(timeout: 10) { (try? tus.uploads())?.isEmpty == true },
                      "the upload is still on the server: \(String(describing: try? tus.uploads()))")
        XCTAssertEqual(try tus.stats().answers("DELETE", 204), 1)
        XCTAssertEqual(try cli.job(id).state, "cancelled")
    }

    func testAnExpiredUploadIsReplacedByANewOne() throws {
        let size = 48 * MiB
        let (file, sha) = try makeLargeFile("expired.bin", size: size)
        let id = try upload(file, ["--limit-rate", "24M"])
        try interrupt(id, size: size, at: [0.3]) { _ in
            XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
            _ = try cli.awaitState(id, "paused")
        }
        let old = try XCTUnwrap(try tus.uploads().first)
        try tus.expire(old.id)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 60)
        let fresh = try assertOnServer(file, sha256: sha, size: size)
        XCTAssertNotEqual(fresh.id, old.id)
        let stats = try tus.stats()
        XCTAssertEqual(stats.answers("HEAD", 410), 1, "the expired upload was asked for once: \(stats)")
        XCTAssertEqual(stats.requests("POST"), 2, "then a new one was created: \(stats)")
    }

    func testABackupToATusEndpointNamesEachUploadByItsRelativePath() throws {
        let files = ["top.txt", "a/b/deep.bin", "a/with space.txt"]
        let (tree, digests) = try makeTree(files, size: 100 * KiB)
        let result = try cli.backup(tree, to: "tus+" + tus.endpoint)
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "\(result)")
        let waited = cli.run(["wait", "--batch", String(batch)], timeout: 60)
        XCTAssertEqual(waited.exitCode, 0, waited.summary)
        let uploads = try tus.uploads()
        XCTAssertEqual(Set(uploads.compactMap { $0.metadata["filename"] }), Set(files))
        for upload in uploads {
            XCTAssertEqual(try tus.sha256(of: upload.id), digests[upload.metadata["filename"] ?? ""], upload.metadata.description)
        }
    }
}
