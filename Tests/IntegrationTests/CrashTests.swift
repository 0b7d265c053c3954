import Foundation
import XCTest

/// Kills the daemon with SIGKILL at random moments while downloads and uploads run, restarts
/// it each time, and checks at the end: every job completed, every downloaded file identical to
/// its source, every upload received complete, and the database sound.
final class CrashTests: UploadTestCase {
    override class var slowRate: String { "2m" }

    func testTenKillsAtRandomMomentsLoseNothing() throws {
        var generator = SeededGenerator(seed: 0xC2A5_4001)
        var downloads: [(id: Int, dest: URL, sha: String, size: Int)] = []
        for index in 0..<3 {
            let name = "crash\(index).bin"
            let size = 3 * MiB + index * 4099
            let sha = try makeSource(name, size: size)
            let dest = destination(name)
            downloads.append((try cli.download(nginx.url(.slow, name), to: dest), dest, sha, size))
        }
        var uploads: [(id: Int, sha: String)] = []
        for index in 0..<2 {
            let file = try makeUploadFile("up\(index).bin", size: 1 * MiB + index)
            let sha = try cli.sha256(of: file)
            uploads.append((try cli.upload(receiver.uploadURL(slow: true), ["-F", "file=@\(file.path)", "-F", "n=\(index)"]), sha))
        }

        for kill in 1...10 {
            // The moment of the kill is the thing under test, so it is a random wait, not a condition.
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...0.6, using: &generator))
            daemon.kill9()
            for download in downloads where Files.exists(download.dest) {
                XCTAssertEqual(try cli.sha256(of: download.dest), download.sha,
                               "kill \(kill): a destination that exists is complete")
            }
            try daemon.restart()
        }

        for download in downloads {
            try waitCompleted(download.id, timeout: 40)
            try assertCompletedDownload(download.id, at: download.dest, sha256: download.sha, size: download.size)
        }
        for upload in uploads { try waitCompleted(upload.id, timeout: 40) }
        let received = receiver.uploads().flatMap { manifest in
            (manifest["parts"] as? [[String: Any]] ?? []).compactMap { $0["sha256"] as? String }
        }
        for upload in uploads {
            XCTAssertTrue(received.contains(upload.sha), "upload \(upload.id) arrived complete at least once")
        }

        daemon.stop()
        let database = daemon.stateDir.appendingPathComponent("transfers.db").path
        let check = cli.runner.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [database, "PRAGMA integrity_check"], timeout: 10)
        XCTAssertEqual(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "ok", check.summary)
    }
}
