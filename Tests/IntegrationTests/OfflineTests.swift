import Foundation
import XCTest

/// A host that does not answer: its jobs wait (`waiting`, reason offline) without using up
/// their retries, and go on by themselves soon after the host answers again.
final class OfflineTests: IntegrationTestCase {
    func testJobsWaitForTheirHostAndContinueWhenItAnswers() throws {
        let port = try Sockets.freeTCPPort()
        let docroot = workDir.appendingPathComponent("later")
        try FileManager.default.createDirectory(at: docroot, withIntermediateDirectories: true)
        var ids: [Int] = []
        var shas: [String] = []
        for index in 0..<2 {
            let source = docroot.appendingPathComponent("off\(index).bin")
            try Files.randomData(count: 256 * KiB + index).write(to: source)
            shas.append(try cli.sha256(of: source))
            // --retry 0: waiting for the host must not count as a failed retry.
            ids.append(try cli.download("http://127.0.0.1:\(port)/off\(index).bin", to: destination("off\(index).bin"),
                                        ["--retry", "0"]))
        }
        for id in ids {
            let waiting = try cli.awaitState(id, "waiting", timeout: 10)
            XCTAssertTrue((waiting["stateReason"] as? String)?.hasPrefix("offline: http://127.0.0.1:\(port)") == true, waiting.jsonText)
            XCTAssertEqual(waiting.errorCode, "network", waiting.jsonText)
        }

        let server = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/python3"),
            arguments: ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", docroot.path],
            stdoutURL: workDir.appendingPathComponent("http.log"), stderrURL: workDir.appendingPathComponent("http.log"))
        defer { server.stop() }
        XCTAssertTrue(poll(timeout: 10) { Sockets.acceptsConnections(port: port) }, "the host answers again")

        // Probes back off from 1 s, so the jobs go on within seconds, long before their 5-minute fallback.
        for (index, id) in ids.enumerated() {
            try waitCompleted(id, timeout: 20)
            try assertCompletedDownload(id, at: destination("off\(index).bin"), sha256: shas[index], size: 256 * KiB + index)
        }
    }
}
