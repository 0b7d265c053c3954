import Foundation
import XCTest

/// Upload limits observed from the outside, against the werkzeug receiver: per job, global
/// (`limit --up`), and changed while running. As for downloads, a limit can only make a transfer
/// slower, so the lower bounds on time are firm and the upper bounds loose.
final class UploadThrottleTests: UploadTestCase {
    func testJobLimitHoldsTheObservedRate() throws {
        let source = try makeUploadFile("limited.bin", size: 3 * MiB)
        let id = try cli.upload(receiver.uploadURL(), ["-F", "file=@\(source.path)", "--limit-rate", "1M", "--paused"])
        XCTAssertEqual(jsonInt(try cli.job(id)["limit"]), MiB)

        // 3 MiB (and a few hundred bytes of multipart framing) at 1 MiB/s.
        assertLimited(try secondsToComplete(resuming: [id]), bytes: 3 * MiB, rate: MiB, "3 MiB at 1 MiB/s")
        let expected: [ExpectedPart] = [.file(name: "file", source: source, filename: "limited.bin",
                                              contentType: "application/octet-stream")]
        try assertParts(try XCTUnwrap(try receiver.awaitUploads(count: 1).first), upload: 1, expected)
    }

    func testGlobalLimitIsSharedByConcurrentUploads() throws {
        XCTAssertEqual(cli.run(["limit", "--up", "2M"]).exitCode, 0)
        var ids: [Int] = []
        for name in ["a.bin", "b.bin", "c.bin"] {
            let source = try makeUploadFile(name, size: 2 * MiB)
            ids.append(try cli.upload(receiver.rawURL(name), ["-T", source.path, "--paused"]))
        }
        // 6 MiB under one 2 MiB/s limit: 3 s however it is split.
        assertLimited(try secondsToComplete(resuming: ids), bytes: 6 * MiB, rate: 2 * MiB, "6 MiB under a 2 MiB/s global limit")
        for name in ["a.bin", "b.bin", "c.bin"] {
            XCTAssertEqual(try cli.sha256(of: receiver.rawFile(name)), try cli.sha256(of: sources.appendingPathComponent(name)),
                           "\(name) arrived whole")
        }
        let stats = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cli.run(["stats", "--json"]).stdout.utf8)) as? [String: Any])
        let limits = try XCTUnwrap(stats["limits"] as? [String: Any])
        XCTAssertEqual(jsonInt(limits["up"]), 2 * MiB, "stats shows the limit in force")
    }

    func testLimitChangedWhileRunningTakesEffect() throws {
        let source = try makeUploadFile("live.bin", size: 8 * MiB)
        let id = try cli.upload(receiver.rawURL("live.bin"), ["-T", source.path, "--limit-rate", "256K"])
        let slow = try XCTUnwrap(try awaitUploadProgress(id, atLeast: 256 * KiB, timeout: 5).bytesDone)
        XCTAssertLessThan(slow, 2 * MiB, "throttled to 256 KiB/s: \(slow) bytes so far")

        let changed = Date()
        XCTAssertEqual(cli.run(["limit", String(id), "off"]).exitCode, 0)
        try waitCompleted(id, timeout: 10)
        // The remaining 7+ MiB would take 28 s at 256 KiB/s: unlimited, they take moments.
        XCTAssertLessThan(Date().timeIntervalSince(changed), 5, "the raised limit applied within a second")
        XCTAssertEqual(try cli.sha256(of: receiver.rawFile("live.bin")), try cli.sha256(of: source))
    }
}
