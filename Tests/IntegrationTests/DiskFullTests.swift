import Foundation
import XCTest

/// A full disk (here: a file-size limit, which fails writes with EFBIG as ENOSPC would) pauses
/// the job with `disk_full`, keeps the partial file and the database sound, and the job
/// completes once space is back.
final class DiskFullTests: IntegrationTestCase {
    func testFileSizeLimitPausesWithDiskFullAndResumesLater() throws {
        let size = 3 * MiB
        let sha = try makeSource("big.bin", size: size)
        let dest = destination("big.bin")
        // The harness daemon runs without a limit; this one gets `ulimit -f 1024` (bash: 1 MiB).
        daemon.stop()
        let log = workDir.appendingPathComponent("limited-daemon.log")
        let limited = try ChildProcess(
            executable: URL(fileURLWithPath: "/bin/bash"),
            arguments: ["-c", "ulimit -f 1024 && exec \"$0\" \"$@\"", binaries.transferd.path] + daemon.arguments,
            stdoutURL: log, stderrURL: log)
        XCTAssertTrue(poll(timeout: 15) { cli.run(["stats"]).exitCode == 0 }, "the limited daemon starts")

        let id = try cli.download(nginx.url(.files, "big.bin"), to: dest, ["--retry", "0"])
        let paused = try cli.awaitState(id, "paused", timeout: 15)
        XCTAssertEqual(paused.errorCode, "disk_full", paused.jsonText)
        let kept = try XCTUnwrap(paused.bytesDone)
        XCTAssertLessThanOrEqual(kept, MiB, paused.jsonText)
        XCTAssertFalse(Files.exists(dest), "no destination while the disk is full")
        limited.send(signal: SIGTERM)
        XCTAssertNotNil(limited.waitForExit(timeout: 5), "the limited daemon stops on SIGTERM")

        // Space is back: the same job resumes from its bytes and completes.
        try daemon.start()
        XCTAssertEqual(try cli.job(id).state, "paused", "a disk_full pause survives the restart")
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let job = try cli.job(id)
        XCTAssertGreaterThan(jsonInt(job.attemptLog.last?["rangeStart"]) ?? 0, 0, "continued from the kept bytes: \(job.jsonText)")
    }
}
