import Foundation
import XCTest

/// Uploads that are paused, killed, or whose source changes: the body restarts from byte 0
/// and the server sees exactly one complete request, or none at all. Slow transfers go
/// through the receiver's `?slow=1` (about 800 KiB/s read by the server).
final class UploadRecoveryTests: UploadTestCase {
    func testFileChangedAfterQueueingFailsWithSourceChanged() throws {
        // Size changes (bytes appended).
        let grown = try makeUploadFile("grown.txt", size: 256 * KiB)
        let first = try cli.upload(receiver.uploadURL(), ["-F", "f=@\(grown.path)", "--paused"])
        XCTAssertEqual(try cli.job(first).state, "paused")
        let handle = try FileHandle(forWritingTo: grown)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("appended after queueing".utf8))
        try handle.close()

        // Same size, new content and mtime.
        let touched = try makeUploadFile("touched.bin", size: 128 * KiB)
        let second = try cli.upload(receiver.uploadURL(), ["-F", "a=b", "-F", "f=@\(touched.path)", "--paused"])
        let oldDate = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: touched.path)[.modificationDate] as? Date)
        try Files.randomData(count: 128 * KiB).write(to: touched)
        try FileManager.default.setAttributes([.modificationDate: oldDate.addingTimeInterval(5)], ofItemAtPath: touched.path)

        for (id, file) in [(first, grown), (second, touched)] {
            let resumed = cli.run(["resume", String(id)])
            XCTAssertEqual(resumed.exitCode, 0, resumed.summary)
            let job = try cli.awaitState(id, "failed", timeout: 15)
            XCTAssertEqual(job.errorCode, "source_changed", job.jsonText)
            XCTAssertTrue((job.errorMessage ?? "").contains(file.path), "the message names the file: \(job.jsonText)")
            assertOneLineMessage(job.errorMessage ?? "", "error.message")
        }
        XCTAssertEqual(receiver.uploads().count, 0, "no manifest for a changed source: \(receiver.describeLog())")
    }

    func testPauseMidUploadThenResumeSendsOneCompleteBody() throws {
        let size = 6 * MiB
        let file = try makeUploadFile("big.bin", size: size)
        let id = try cli.upload(receiver.uploadURL(slow: true), ["-F", "note=paused once", "-F", "big=@\(file.path)"])

        try awaitUploadProgress(id, atLeast: 256 * KiB)
        let pause = cli.run(["pause", String(id)])
        XCTAssertEqual(pause.exitCode, 0, pause.summary)
        let paused = try cli.awaitState(id, "paused", timeout: 5)
        XCTAssertEqual(receiver.uploads().count, 0, "paused mid-way: nothing complete yet: \(receiver.describeLog())")
        XCTAssertNil(paused.errorObject, paused.jsonText)

        // The human view says the body starts over.
        let shown = cli.run(["show", String(id)])
        XCTAssertEqual(shown.exitCode, 0, shown.summary)
        let text = shown.stdout.lowercased()
        let saysRestart = ["restart", "byte 0", "first byte", "from the start", "from the beginning", "start over"]
            .contains { text.contains($0) }
        XCTAssertTrue(saysRestart,
                      "show says the upload restarts from byte 0 on resume:\n\(shown.stdout)")

        let resumed = cli.run(["resume", String(id)])
        XCTAssertEqual(resumed.exitCode, 0, resumed.summary)
        try waitCompleted(id)
        try assertOneCompleteUpload([
            .field(name: "note", value: "paused once"),
            .file(name: "big", source: file, filename: "big.bin", contentType: "application/octet-stream"),
        ])
        let job = try cli.job(id)
        XCTAssertEqual(job.state, "completed", job.jsonText)
        XCTAssertGreaterThanOrEqual(job.attemptLog.count, 2, "the paused attempt and the one after: \(job.jsonText)")
        try assertResponse(job, status: 200)
    }

    func testDaemonKilledMidUploadCompletesAfterRestart() throws {
        let size = 6 * MiB
        let file = try makeUploadFile("crash.bin", size: size)
        let id = try cli.upload(receiver.uploadURL(slow: true), ["-F", "crash=@\(file.path)"])

        try awaitUploadProgress(id, atLeast: 256 * KiB)
        daemon.kill9()
        XCTAssertEqual(receiver.uploads().count, 0, "killed mid-way: nothing complete: \(receiver.describeLog())")
        try daemon.start()

        try waitCompleted(id)
        try assertOneCompleteUpload([
            .file(name: "crash", source: file, filename: "crash.bin", contentType: "application/octet-stream"),
        ])
        let job = try cli.job(id)
        XCTAssertGreaterThanOrEqual(job.attemptLog.count, 2, "the killed attempt and the one after: \(job.jsonText)")
        try assertResponse(job, status: 200)
    }

    /// Exactly one manifest, and it is complete and correct. The aborted request ends at the
    /// receiver as a 400 (body shorter than its Content-Length) once the receiver has read
    /// what was still buffered; wait for that so a late manifest could not go unseen.
    private func assertOneCompleteUpload(_ expected: [ExpectedPart],
                                         file: StaticString = #filePath, line: UInt = #line) throws {
        let uploads = try receiver.awaitUploads(count: 1)
        receiver.awaitRequests(count: 2, timeout: 15) { $0.path.hasPrefix("/upload") }
        let aborted = receiver.requests().filter { $0.path.hasPrefix("/upload") && $0.status == 400 }
        XCTAssertGreaterThanOrEqual(aborted.count, 1, "the interrupted request was cut short: \(receiver.describeLog())",
                                    file: file, line: line)
        XCTAssertEqual(receiver.uploads().count, 1, "exactly one complete upload: \(receiver.describeLog())",
                       file: file, line: line)
        let manifest = try XCTUnwrap(uploads.first, file: file, line: line)
        try assertParts(manifest, upload: 1, expected, file: file, line: line)
        XCTAssertEqual(jsonInt(manifest["bodySize"]), jsonInt(manifest["contentLength"]) ?? jsonInt(manifest["bodySize"]),
                       "whole body received: \(manifest.jsonText)", file: file, line: line)
    }
}
