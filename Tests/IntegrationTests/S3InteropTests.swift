import Foundation
import XCTest

/// The S3 upload and download paths against each real S3 implementation the harness runs (issue
/// 59): a multipart upload read back whole, a pause and a `kill -9` mid-upload that continue from
/// the listed parts, a cancel that leaves no multipart upload on the server, a download paused and
/// resumed. Bytes are counted on the server's side (moto's own count, the relay's for the others):
/// after a pause or a kill the server receives at most one part per part in flight beyond the
/// object's size. One subclass per server below, so each server's results show by name.
class S3InteropTests: S3InteropTestCase {
    /// The engine's default part size, and parts in flight.
    let part = 8 * MiB
    let lanes = 4
    /// Over the 16 MiB single-PUT threshold: five parts.
    let size = 40 * MiB

    func upload(_ file: URL, key: String, _ options: [String] = []) throws -> Int {
        try cli.upload("s3://\(s3.bucket)/\(key)", ["-T", file.path, "--s3-endpoint", s3.endpoint] + options)
    }

    func assertObject(_ key: String, sha256: String, size: Int, line: UInt = #line) throws {
        let object = try XCTUnwrap(try s3.boto.objectSHA256(key), "no object \(key)", line: line)
        XCTAssertEqual(object.size, Int64(size), line: line)
        XCTAssertEqual(object.sha256, sha256, "the object differs from the file", line: line)
    }

    /// ListMultipartUploads lists nothing: no upload of this job (nor an orphan of a retry) is left.
    func assertNoUploadLeft(line: UInt = #line) throws {
        let left = try s3.boto.multipartUploads()
        XCTAssertTrue(left.isEmpty, "multipart uploads left on the server: \(left)", line: line)
    }

    /// One upload created and completed; the parts' bodies add up to at most `extra` beyond the object.
    func assertSentOnce(allowingExtra extra: Int, line: UInt = #line) throws {
        let stats = try s3.stats()
        print("\(name): UploadPart bytes beyond the object's \(size): \(stats.uploadPartBytes - Int64(size)) (at most \(extra))")
        XCTAssertEqual(stats.requests(.createMultipartUpload), 1, "the recorded upload was continued, never created again: \(stats)", line: line)
        XCTAssertGreaterThanOrEqual(stats.uploadPartBytes, Int64(size), "\(stats)", line: line)
        XCTAssertLessThanOrEqual(stats.uploadPartBytes - Int64(size), Int64(extra),
                                 "UploadPart bytes beyond the object's \(size): at most \(extra) allowed: \(stats)", line: line)
    }

    func checkAMultipartUploadReadsBackWhole() throws {
        let (file, sha) = try makeLargeFile("multipart.bin", size: size)
        let id = try upload(file, key: "interop/multipart.bin")
        try waitCompleted(id, timeout: 90)
        try assertObject("interop/multipart.bin", sha256: sha, size: size)
        try assertSentOnce(allowingExtra: 0)
        XCTAssertEqual(try s3.stats().requests(.completeMultipartUpload), 1, "completed once")
        try assertNoUploadLeft()
    }

    func checkPauseAndResumeContinueFromTheListedParts() throws {
        let (file, sha) = try makeLargeFile("paused.bin", size: size)
        let id = try upload(file, key: "interop/paused.bin", ["--limit-rate", "16M"])
        try interrupt(id, size: size, at: [0.5], timeout: 30) { _ in
            XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
            _ = try cli.awaitState(id, "paused")
        }
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 90)
        try assertObject("interop/paused.bin", sha256: sha, size: size)
        try assertSentOnce(allowingExtra: lanes * part)
        try assertNoUploadLeft()
    }

    func checkKillNineContinuesFromTheListedParts() throws {
        let (file, sha) = try makeLargeFile("killed.bin", size: size)
        let id = try upload(file, key: "interop/killed.bin", ["--limit-rate", "16M"])
        try interrupt(id, size: size, at: [0.5], timeout: 30) { _ in
            daemon.kill9()
            try restartDaemon()
        }
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 90)
        try assertObject("interop/killed.bin", sha256: sha, size: size)
        try assertSentOnce(allowingExtra: lanes * part)
        try assertNoUploadLeft()
    }

    func checkCancelLeavesNoMultipartUpload() throws {
        let (file, _) = try makeLargeFile("cancelled.bin", size: size)
        let id = try upload(file, key: "interop/cancelled.bin", ["--limit-rate", "8M"])
        // Cancel mid-upload; a job that never gets that far (its uploads refused) is cancelled
        // anyway after the wait, so that what its attempts left behind is checked too.
        let wanted = size * 3 / 10
        let reached = poll(timeout: 30, interval: 0.05) {
            guard let job = try? cli.job(id) else { return false }
            return (job.state == "running" && (job.bytesDone ?? 0) >= wanted) || ["failed", "completed"].contains(job.state ?? "")
        }
        let before = try cli.job(id)
        XCTAssertTrue(reached && before.state == "running", "the upload never ran to \(wanted) bytes: \(before.jsonText)")
        XCTAssertEqual(cli.run(["cancel", String(id)]).exitCode, 0, before.jsonText)
        _ = try cli.awaitState(id, "cancelled")
        let emptied = poll(timeout: 15) { (try? s3.boto.multipartUploads())?.isEmpty == true }
        let stats = try s3.stats()
        XCTAssertTrue(emptied, "uploads left after cancel: \(String(describing: try? s3.boto.multipartUploads())); \(stats)")
        XCTAssertNil(try s3.boto.objectSHA256("interop/cancelled.bin"), "a cancelled upload made no object")
    }

    func checkADownloadPausedAndResumedReadsWhole() throws {
        let (file, sha) = try makeLargeFile("object.bin", size: size)
        try s3.boto.put("objects/object.bin", from: file)
        let dest = destination("object.bin")
        let id = try cli.download("s3://\(s3.bucket)/objects/object.bin", to: dest,
                                  ["--s3-endpoint", s3.endpoint, "--limit-rate", "16M"])
        try pauseAfterProgress(id, atLeast: 8 * MiB, total: size)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 60)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
    }
}

/// moto from the test venv (5.2.6): the reference the others are held to.
final class S3InteropMotoTests: S3InteropTests {
    override class var implementation: S3Implementation { .moto }

    func testAMultipartUploadReadsBackWhole() throws { try checkAMultipartUploadReadsBackWhole() }
    func testPauseAndResumeContinueFromTheListedParts() throws { try checkPauseAndResumeContinueFromTheListedParts() }
    func testKillNineContinuesFromTheListedParts() throws { try checkKillNineContinuesFromTheListedParts() }
    func testCancelLeavesNoMultipartUpload() throws { try checkCancelLeavesNoMultipartUpload() }
    func testADownloadPausedAndResumedReadsWhole() throws { try checkADownloadPausedAndResumedReadsWhole() }
}

/// moto 5.2.1 (issue 59 item 4): CompleteMultipartUpload answers `CompleteMultipartUploadResponse`.
final class S3InteropMoto521Tests: S3InteropTests {
    override class var implementation: S3Implementation { .moto521 }

    func testAMultipartUploadReadsBackWhole() throws { try checkAMultipartUploadReadsBackWhole() }
    func testPauseAndResumeContinueFromTheListedParts() throws { try checkPauseAndResumeContinueFromTheListedParts() }
    func testKillNineContinuesFromTheListedParts() throws { try checkKillNineContinuesFromTheListedParts() }
    func testCancelLeavesNoMultipartUpload() throws { try checkCancelLeavesNoMultipartUpload() }
    func testADownloadPausedAndResumedReadsWhole() throws { try checkADownloadPausedAndResumedReadsWhole() }
}

/// `rclone serve s3` (issue 59 items 1 and 2): `InitiateMultipartUpload` as CreateMultipartUpload's
/// root, and `200 OK` with a `Content-Range` to a ranged GET.
final class S3InteropRcloneTests: S3InteropTests {
    override class var implementation: S3Implementation { .rclone }

    func testAMultipartUploadReadsBackWhole() throws { try checkAMultipartUploadReadsBackWhole() }
    func testPauseAndResumeContinueFromTheListedParts() throws { try checkPauseAndResumeContinueFromTheListedParts() }
    func testKillNineContinuesFromTheListedParts() throws { try checkKillNineContinuesFromTheListedParts() }
    func testCancelLeavesNoMultipartUpload() throws { try checkCancelLeavesNoMultipartUpload() }
    func testADownloadPausedAndResumedReadsWhole() throws { try checkADownloadPausedAndResumedReadsWhole() }

    /// Item 1: the resumed GET's answer is `200 OK` + `Content-Range: bytes N-…/SIZE` + the tail's
    /// length. Whatever the engine makes of it, the job must end failed or completed with every
    /// byte: never completed at the tail's length.
    func testAResumedDownloadAnswered200WithAContentRangeNeverCompletesShort() throws {
        let rclone = try XCTUnwrap(s3 as? RcloneS3Server)
        let (file, sha) = try makeLargeFile("object.bin", size: size)
        try s3.boto.put("objects/object.bin", from: file)
        let dest = destination("object.bin")
        let id = try cli.download("s3://\(s3.bucket)/objects/object.bin", to: dest,
                                  ["--s3-endpoint", s3.endpoint, "--limit-rate", "16M"])
        try pauseAfterProgress(id, atLeast: 8 * MiB, total: size)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        let ended = try cli.awaitJob(id, "completed or failed", timeout: 60) { ["completed", "failed"].contains($0.state ?? "") }
        let statuses = try rclone.statuses()
        XCTAssertGreaterThanOrEqual(statuses["GetObject 200"] ?? 0, 2,
                                    "the resumed GET was answered 200 (with a Content-Range), as rclone does: \(statuses)")
        if ended.state == "completed" {
            XCTAssertEqual(ended.bytesDone, size, "completed short: \(ended.jsonText)")
            XCTAssertEqual(Files.size(dest), size, "the destination's length after a 200 with a Content-Range")
            XCTAssertEqual(try cli.sha256(of: dest), sha, "the destination's bytes after a 200 with a Content-Range")
        } else {
            XCTAssertFalse(Files.exists(dest), "a failed download left a destination: \(ended.jsonText)")
        }
    }
}

/// SeaweedFS (issue 59 item 3): ListParts without checksums, and a Complete that mixes parts with
/// and without `ChecksumCRC32` refused with 400.
final class S3InteropSeaweedFSTests: S3InteropTests {
    override class var implementation: S3Implementation { .seaweedfs }

    func testAMultipartUploadReadsBackWhole() throws { try checkAMultipartUploadReadsBackWhole() }
    func testPauseAndResumeContinueFromTheListedParts() throws { try checkPauseAndResumeContinueFromTheListedParts() }
    func testKillNineContinuesFromTheListedParts() throws { try checkKillNineContinuesFromTheListedParts() }
    func testCancelLeavesNoMultipartUpload() throws { try checkCancelLeavesNoMultipartUpload() }
    func testADownloadPausedAndResumedReadsWhole() throws { try checkADownloadPausedAndResumedReadsWhole() }
}
