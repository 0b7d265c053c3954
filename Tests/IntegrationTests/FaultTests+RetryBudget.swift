import Foundation
import XCTest

/// A server that makes every attempt start over: the retries run out instead of being renewed
/// forever, and a refused redirect says what it refused.
extension FaultTests {
    /// Every GET sees a new entity (a new ETag), and the connection drops after 64 KiB: each
    /// attempt throws the last one's bytes away and keeps no more than it did. Only the first
    /// attempt made progress, so `--retry 2` allows three more, and the job fails.
    func testAnEntityThatKeepsChangingUsesUpTheRetries() throws {
        let url = faults.url("shifty.bin", size: MiB, ["change_every": "1", "drop": String(64 * KiB), "times": "1000"])
        let id = try cli.download(url, to: destination("shifty.bin"), ["--retry", "2"])
        let job = try cli.awaitState(id, "failed", timeout: 20)
        XCTAssertEqual(job.attempts, 4, "one attempt with progress, then 1 + 2 retries: \(job.jsonText)")
        XCTAssertEqual(faults.gets("shifty.bin").count, 4, faults.describeLog())
    }

    /// Every 206 starts 1000 bytes after the requested offset, so each resumed attempt starts
    /// over and the next one redoes the same 64 KiB from byte 0: attempts that start over count.
    func testARangeStartThatKeepsMovingUsesUpTheRetries() throws {
        let url = faults.url("moving.bin", size: MiB, ["shift_range": "1000", "drop": String(64 * KiB), "times": "1000"])
        let id = try cli.download(url, to: destination("moving.bin"), ["--retry", "2"])
        let job = try cli.awaitState(id, "failed", timeout: 20)
        XCTAssertEqual(job.attempts, 4, job.jsonText)
        XCTAssertEqual(job.errorCode, "source_changed", job.jsonText)
    }

    /// A redirect to file:// is refused, and the message names it rather than "https to http".
    func testARefusedRedirectSaysWhatWasRefused() throws {
        for target in ["file:///etc/passwd", "ftp://127.0.0.1/x"] {
            let name = "redirect-\(target.prefix(3)).bin"
            let id = try cli.download(faults.url(name, size: KiB, ["redirect": target, "times": "100"]),
                                      to: destination(name))
            let job = try cli.awaitState(id, "failed", timeout: 10)
            XCTAssertEqual(job.errorCode, "insecure_redirect", job.jsonText)
            XCTAssertEqual(job.attempts, 1, job.jsonText)
            let message = job.errorMessage ?? ""
            assertOneLineMessage(message, job.jsonText)
            XCTAssertTrue(message.contains(target), "the message names \(target): \(message)")
            XCTAssertFalse(message.contains("https to http"), message)
            XCTAssertFalse(Files.exists(destination(name)))
        }
    }
}
