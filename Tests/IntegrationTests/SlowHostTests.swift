import Foundation
import XCTest

/// A host that dribbles a byte now and then (issue 60, item 8): four downloads from it took all
/// four slots and a job for a healthy host waited indefinitely, since a trickle never trips the
/// stall timeout. The speed rule (`--speed-limit`, `--speed-time`: here 1 KiB/s over 3 s, so
/// the test is short) stops such attempts and gives their slots to the next job.
final class SlowHostTests: IntegrationTestCase {
    override class var daemonArguments: [String] { ["--max-active", "4", "--speed-limit", "1K", "--speed-time", "3"] }

    private var trickler: FaultServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        trickler = try FaultServer(outputURL: workDir.appendingPathComponent("trickle.out"),
                                   scratch: workDir.appendingPathComponent("trickle-curl"))
        try trickler.start()
    }

    override func tearDownWithError() throws {
        trickler?.stop()
        try super.tearDownWithError()
    }

    func testATricklingHostGivesItsSlotsBackToAHealthyOne() throws {
        let slow = try (0..<4).map { index in
            try cli.download(trickler.url("t\(index).bin", size: 1 * MiB, ["rate": "2"]), to: destination("t\(index).bin"))
        }
        for id in slow { try cli.awaitJob(id, "running") { $0.state == "running" } }
        let sha = try makeSource("healthy.bin", size: 200 * KiB)
        let healthy = try cli.download(nginx.url(.files, "healthy.bin"), to: destination("healthy.bin"))
        try waitCompleted(healthy, timeout: 20)
        try assertCompletedDownload(healthy, at: destination("healthy.bin"), sha256: sha, size: 200 * KiB)
        for id in slow {
            let job = try cli.awaitJob(id, "its trickling attempt stopped", timeout: 20) { ($0["attempts"] as? Int ?? 0) >= 1 && $0.state != "running" }
            let error = job["error"] as? [String: Any]
            XCTAssertEqual(error?["code"] as? String, "stalled", job.jsonText)
            XCTAssertTrue((error?["message"] as? String ?? "").contains("slower than 1024 bytes/s for 3 s"), job.jsonText)
        }
        XCTAssertTrue(daemon.isRunning)
    }
}
