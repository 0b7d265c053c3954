import Foundation
import XCTest

/// Once a job has ended, the daemon holds none of its files open (issue 61, item 2): a finished
/// download kept its inode open until the next download finished, so `umount` of a USB stick
/// failed and deleting the file freed no space. Checked in `/proc/PID/fd` after each kind of job
/// ends: download, batch, upload, a cancel, a failure (here, against nginx), tus and S3 (below).
final class OpenFileTests: IntegrationTestCase {
    func testAFinishedDownloadLeavesNoDescriptorOpen() throws {
        for index in 0..<8 {
            let size = (index % 2 == 0 ? 100 * KiB : 6 * MiB) + index
            let sha = try makeSource("f\(index).bin", size: size)
            let dest = destination("f\(index).bin")
            let id = try cli.download(nginx.url(.files, "f\(index).bin"), to: dest)
            try waitCompleted(id)
            try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
            assertNothingOpen(under: downloads, "after download \(index)")
        }
    }

    func testABatchAnUploadACancelAndAFailureLeaveNoDescriptorOpen() throws {
        for index in 0..<20 { try makeSource("b\(index).bin", size: 64 * KiB + index) }
        let lines = (0..<20).map { manifestLine(key: "b\($0)", download: ["url": nginx.url(.files, "b\($0).bin"),
                                                                          "output": destination("b\($0).bin").path]) }
        let batch = try XCTUnwrap(jsonInt(try cli.submit(try cli.writeManifest(lines, to: workDir.appendingPathComponent("b.jsonl")))["batch"]))
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        assertNothingOpen(under: downloads, "after a batch")

        let sources = workDir.appendingPathComponent("sources")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        let file = sources.appendingPathComponent("up.bin")
        try Files.randomData(count: 3 * MiB).write(to: file)
        let upload = try cli.upload(nginx.davURL("up.bin"), ["-T", file.path])
        try waitCompleted(upload)
        assertNothingOpen(under: sources, "after an upload")

        try makeSource("slow.bin", size: 8 * MiB)
        let slow = try cli.download(nginx.url(.slow, "slow.bin"), to: destination("slow.bin"))
        try cli.awaitJob(slow, "some bytes") { ($0.bytesDone ?? 0) > 0 }
        XCTAssertEqual(cli.run(["cancel", String(slow)]).exitCode, 0)
        _ = try cli.awaitState(slow, "cancelled")
        assertNothingOpen(under: downloads, "after a cancel")

        let missing = try cli.download(nginx.url(.files, "missing.bin"), to: destination("missing.bin"))
        XCTAssertNotEqual(cli.wait([missing]).exitCode, 0)
        assertNothingOpen(under: downloads, "after a failure")
    }
}

/// A tus upload, finished and cancelled, against tuspyserver.
final class TusOpenFileTests: TusTestCase {
    func testATusUploadLeavesNoDescriptorOpen() throws {
        let (file, _) = try makeLargeFile("tus.bin", size: 3 * MiB)
        let id = try cli.upload(tus.endpoint, ["-T", file.path, "--tus", "--chunk-size", "1M"])
        try waitCompleted(id)
        assertNothingOpen(under: workDir.appendingPathComponent("tus.bin"), "after a tus upload")
        let cancelled = try cli.upload(tus.endpoint, ["-T", file.path, "--tus", "--chunk-size", "1M", "--limit-rate", "512K"])
        try cli.awaitJob(cancelled, "running") { $0.state == "running" }
        XCTAssertEqual(cli.run(["cancel", String(cancelled)]).exitCode, 0)
        _ = try cli.awaitState(cancelled, "cancelled")
        assertNothingOpen(under: workDir.appendingPathComponent("tus.bin"), "after a cancelled tus upload")
    }
}

/// An S3 multipart upload and an S3 download, against moto.
final class S3OpenFileTests: S3TestCase {
    func testS3JobsLeaveNoDescriptorOpen() throws {
        let (file, _) = try makeLargeFile("s3.bin", size: 20 * MiB)
        let id = try cli.upload("s3://\(s3.bucket)/open/s3.bin", ["-T", file.path, "--s3-endpoint", s3.endpoint])
        try waitCompleted(id, timeout: 60)
        assertNothingOpen(under: workDir.appendingPathComponent("s3.bin"), "after an S3 upload")
        let download = try cli.download("s3://\(s3.bucket)/open/s3.bin", to: destination("s3.bin"), ["--s3-endpoint", s3.endpoint])
        try waitCompleted(download, timeout: 60)
        assertNothingOpen(under: downloads, "after an S3 download")
    }
}

extension IntegrationTestCase {
    /// No descriptor of the daemon points at `path` or a file under it (an unnamed file linked
    /// into place shows as `DIR/#INODE (deleted)`). A finishing group lets go of its files just
    /// after it answers its jobs: a bounded wait for that.
    func assertNothingOpen(under path: URL, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        let open = { () -> [String] in
            guard let pid = self.daemon.child?.pid,
                  let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return [] }
            return entries.compactMap { entry in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(entry)")
                else { return nil }
                return target.hasPrefix(path.path) ? target : nil
            }
        }
        XCTAssertTrue(poll(timeout: 2) { open().isEmpty }, "\(context) the daemon still holds \(open())", file: file, line: line)
    }
}
