import Foundation
import XCTest

/// Resumable-upload servers that lie (issue 60, items 1, 5, 6, 7): a part list that never
/// ends, tus offsets that never move or run ahead of what was sent, and a `modify --url` that
/// must take the upload's session away from the old server. Each attacked job ends with a
/// typed error within its retries, the daemon's memory stays small, and nothing loops.
final class HostileSessionTests: IntegrationTestCase {
    override class var daemonEnvironment: [String: String] {
        ["AWS_ACCESS_KEY_ID": "AKIDHOSTILE", "AWS_SECRET_ACCESS_KEY": "hostile-secret", "AWS_REGION": "us-east-1"]
    }

    private var hostile: HostileSessionServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        hostile = try HostileSessionServer(outputURL: workDir.appendingPathComponent("hostile.log"),
                                           scratch: workDir.appendingPathComponent("hostile-scratch"))
        try hostile.start()
    }

    override func tearDownWithError() throws {
        hostile?.stop()
        try super.tearDownWithError()
    }

    private func awaitEnd(_ id: Int, timeout: TimeInterval = 60) throws -> JobJSON {
        try cli.awaitJob(id, "the job ended", timeout: timeout) { ["failed", "completed", "cancelled"].contains($0.state ?? "") }
    }

    /// Every ListParts answered `IsTruncated` with the same marker: the daemon paged forever
    /// (26,500 requests in 50 s, 1.1 GB of memory).
    func testAPartListThatNeverEndsFailsTheJobInsteadOfPagingForever() throws {
        let (file, _) = try makeLargeFile("parts.bin", size: 20 * MiB)
        let id = try cli.upload("s3://bucket/parts.bin", ["-T", file.path, "--s3-endpoint", hostile.baseURL, "--retry", "2"])
        // Another job meanwhile, from a healthy server: it runs to its end as usual.
        let sha = try makeSource("beside.bin", size: 2 * MiB)
        let beside = try cli.download(nginx.url(.slow, "beside.bin"), to: destination("beside.bin"))
        let job = try awaitEnd(id)
        try waitCompleted(beside, timeout: 30)
        try assertCompletedDownload(beside, at: destination("beside.bin"), sha256: sha, size: 2 * MiB)
        XCTAssertEqual(job.state, "failed", job.jsonText)
        let error = job["error"] as? [String: Any]
        XCTAssertEqual(error?["code"] as? String, "protocol", job.jsonText)
        XCTAssertTrue((error?["message"] as? String ?? "").contains("does not move forward"), job.jsonText)
        let lists = try hostile.counts().requests["GET ListParts"] ?? 0
        XCTAssertGreaterThan(lists, 0, "the part list was asked for")
        XCTAssertLessThanOrEqual(lists, 2 * 3, "at most two pages an attempt, three attempts")
        let resident = try XCTUnwrap(daemon.residentMiB)
        print("\(name): \(lists) ListParts requests; daemon resident \(resident) MiB")
        XCTAssertLessThan(resident, 100, "the daemon's memory stays small")
        XCTAssertTrue(daemon.isRunning)
    }

    /// Each PATCH answered with an unchanged Upload-Offset was sent again at once: 463,000
    /// PATCHes in 250 s, each a database write.
    func testATusServerThatTakesNothingOfEachPatchFailsTheJob() throws {
        let (file, _) = try makeLargeFile("stuck.bin", size: 2 * MiB)
        let id = try cli.upload(hostile.tus("stuck"), ["-T", file.path, "--tus", "--chunk-size", "1M", "--retry", "1"])
        let job = try awaitEnd(id)
        XCTAssertEqual(job.state, "failed", job.jsonText)
        XCTAssertEqual((job["error"] as? [String: Any])?["code"] as? String, "protocol", job.jsonText)
        let patches = try hostile.counts().requests["PATCH tus"] ?? 0
        XCTAssertGreaterThan(patches, 0)
        XCTAssertLessThanOrEqual(patches, 2 * 4, "a few PATCHes an attempt, two attempts: \(patches)")
        let resident = try XCTUnwrap(daemon.residentMiB)
        print("\(name): \(patches) PATCHes; daemon resident \(resident) MiB")
        XCTAssertLessThan(resident, 100)
    }

    /// An offset of start + sent + 1000 made the job "completed" with bytes never sent.
    func testATusOffsetBeyondWhatThePatchSentIsNotBelieved() throws {
        let (file, _) = try makeLargeFile("ahead.bin", size: 2 * MiB)
        let id = try cli.upload(hostile.tus("ahead"), ["-T", file.path, "--tus", "--chunk-size", "1M", "--retry", "0"])
        let job = try awaitEnd(id)
        XCTAssertEqual(job.state, "failed", "never completed on an offset past what was sent: \(job.jsonText)")
        XCTAssertTrue(((job["error"] as? [String: Any])?["message"] as? String ?? "").contains("after a PATCH that ended at byte"),
                      job.jsonText)
    }

    /// After `modify --url` to another origin the PATCHes (and a later token, and cancel's
    /// DELETE) still went to the old server's upload URL.
    func testModifyToAnotherOriginForgetsTheOldServersUpload() throws {
        let other = try HostileSessionServer(outputURL: workDir.appendingPathComponent("other.log"),
                                             scratch: workDir.appendingPathComponent("other-scratch"))
        try other.start()
        defer { other.stop() }
        let (file, sha) = try makeLargeFile("moved.bin", size: 4 * MiB)
        let id = try cli.upload(hostile.tus("honest"), ["-T", file.path, "--tus", "--chunk-size", "256K", "--limit-rate", "1M"])
        try cli.awaitJob(id, "some bytes on the first server") { ($0.bytesDone ?? 0) >= 512 * KiB }
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        try cli.awaitJob(id, "paused") { $0.state == "paused" }
        let before = try hostile.counts().requests
        let modify = cli.run(["modify", String(id), "--url", other.tus("honest"), "--limit-rate", "0"])
        XCTAssertEqual(modify.exitCode, 0, modify.summary)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id)
        XCTAssertEqual(try hostile.counts().requests, before, "nothing more went to the old server")
        let moved = try other.counts()
        XCTAssertEqual(moved.requests["POST tus"], 1, "a new upload made on the new server: \(moved)")
        XCTAssertEqual(moved.patchBytes, 4 * MiB, "the whole file sent there once")
        XCTAssertFalse(sha.isEmpty)
    }
}
