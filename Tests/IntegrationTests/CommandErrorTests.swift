import Foundation
import XCTest

/// Illegal transitions, unknown ids, bad input on the command line and on the socket.
final class CommandErrorTests: IntegrationTestCase {
    func testIllegalTransitionsAreRefusedNamingTheState() throws {
        let size = 256 * KiB
        let sha = try makeSource("small.bin", size: size)
        let done = try cli.download(nginx.url(.files, "small.bin"), to: destination("small.bin"))
        try waitCompleted(done)
        try assertCompletedDownload(done, at: destination("small.bin"), sha256: sha, size: size)

        let pauseCompleted = cli.run(["pause", String(done)])
        XCTAssertEqual(pauseCompleted.exitCode, 1, pauseCompleted.summary)
        assertOneLineMessage(pauseCompleted.stderr, pauseCompleted.command)
        XCTAssertTrue(pauseCompleted.stderr.contains("completed"), "message names the state: \(pauseCompleted.summary)")
        XCTAssertEqual(try cli.job(done).state, "completed", "refused transition changes nothing")

        let queued = try cli.download(nginx.url(.files, "small.bin"), to: destination("second.bin"), ["--paused"])
        let cancel = cli.run(["cancel", String(queued)])
        XCTAssertEqual(cancel.exitCode, 0, cancel.summary)
        try cli.awaitState(queued, "cancelled", timeout: 5)
        let resumeCancelled = cli.run(["resume", String(queued)])
        XCTAssertEqual(resumeCancelled.exitCode, 1, resumeCancelled.summary)
        assertOneLineMessage(resumeCancelled.stderr, resumeCancelled.command)
        XCTAssertTrue(resumeCancelled.stderr.contains("cancelled"), "message names the state: \(resumeCancelled.summary)")
        XCTAssertEqual(try cli.job(queued).state, "cancelled")
        XCTAssertFalse(Files.exists(destination("second.bin")))

        let waitCancelled = cli.wait([queued], timeout: 5)
        XCTAssertEqual(waitCancelled.exitCode, 1, "wait on a cancelled job: \(waitCancelled.summary)")

        for command in ["show", "pause", "resume", "cancel", "retry"] {
            let unknown = cli.run([command, "987654"])
            XCTAssertEqual(unknown.exitCode, 1, "unknown id: \(unknown.summary)")
            assertOneLineMessage(unknown.stderr, unknown.command)
        }
    }

    func testWaitTimeoutExits124() throws {
        try makeSource("held.bin", size: 64 * KiB)
        let id = try cli.download(nginx.url(.files, "held.bin"), to: destination("held.bin"), ["--paused"])
        let result = cli.wait([id], timeout: 1)
        XCTAssertEqual(result.exitCode, 124, result.summary)
    }

    func testMalformedURLIsUsageError() throws {
        for url in ["notaurl", "ftp:/x"] {
            let result = cli.run(["download", url, "-o", destination("bad.bin").path])
            XCTAssertEqual(result.exitCode, 2, result.summary)
            assertOneLineMessage(result.stderr, result.command)
        }
        XCTAssertEqual(try cli.jobs().count, 0, "no job created for malformed URLs")
    }

    /// URLs libcurl's parser refuses are refused when queued (exit 2, libcurl's reason), from
    /// `download`, `upload` and a manifest line (`FILE:LINE: reason`), instead of being retried.
    func testURLsLibcurlRefusesAreUsageErrorsWithItsReason() throws {
        let upload = workDir.appendingPathComponent("body.bin")
        try Data("body".utf8).write(to: upload)
        let refused: [(url: String, reason: String)] = [
            (nginx.baseURL + "/files/with space.bin", "%20"),
            ("http://127.0.0.1:99999/x", "65535"),
            ("http://a b/x", "hostname"),
        ]
        for (url, reason) in refused {
            for arguments in [["download", url, "-o", destination("bad.bin").path], ["upload", url, "-T", upload.path]] {
                let result = cli.run(arguments)
                XCTAssertEqual(result.exitCode, 2, result.summary)
                assertOneLineMessage(result.stderr, result.command)
                XCTAssertTrue(result.stderr.contains(reason), "libcurl's reason (\(reason)): \(result.summary)")
                XCTAssertTrue(result.stderr.contains(url), "the message names the URL: \(result.summary)")
            }
        }
        let manifest = try cli.writeManifest([
            manifestLine(key: "a", download: ["url": nginx.url(.files, "ok.bin"), "output": destination("a").path]),
            manifestLine(key: "b", upload: ["url": "http://127.0.0.1:99999/x", "file": upload.path]),
        ], to: workDir.appendingPathComponent("bad-url.jsonl"))
        let submitted = cli.run(["batch", "submit", manifest.path])
        XCTAssertEqual(submitted.exitCode, 2, submitted.summary)
        assertOneLineMessage(submitted.stderr, submitted.command)
        XCTAssertTrue(submitted.stderr.contains("\(manifest.path):2: malformed URL"), "FILE:LINE: reason: \(submitted.summary)")
        XCTAssertEqual(try cli.jobs().count, 0, "nothing queued for refused URLs")
        XCTAssertEqual(nginx.accessLogEntries().count, 0, "nothing was fetched: \(nginx.describeLog())")
    }

    func testExistingDestinationRequiresOverwrite() throws {
        let size = 128 * KiB
        let sha = try makeSource("exists.bin", size: size)
        let dest = destination("exists.bin")
        try Data("precious".utf8).write(to: dest)

        let refused = cli.run(["download", nginx.url(.files, "exists.bin"), "-o", dest.path])
        XCTAssertEqual(refused.exitCode, 2, refused.summary)
        assertOneLineMessage(refused.stderr, refused.command)
        XCTAssertEqual(try Data(contentsOf: dest), Data("precious".utf8), "existing file untouched")

        let id = try cli.download(nginx.url(.files, "exists.bin"), to: dest, ["--overwrite"])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
    }

    func testDestinationInsideRegularFileIsRefusedOrFailsWithIO() throws {
        try makeSource("io.bin", size: 128 * KiB)
        let blocker = destination("blocker.txt")
        try Data("a regular file, not a directory".utf8).write(to: blocker)
        let dest = blocker.appendingPathComponent("out.bin")

        let result = cli.run(["download", nginx.url(.files, "io.bin"), "-o", dest.path, "--retry", "0"])
        switch result.exitCode {
        case 2:
            assertOneLineMessage(result.stderr, result.command)
        case 0:
            let id = try XCTUnwrap(Int(result.trimmedStdout.split(separator: "\n").last ?? ""), result.summary)
            let job = try cli.awaitJob(id, "failed", timeout: 15) { $0.state == "failed" }
            XCTAssertEqual(job.errorCode, "io", job.jsonText)
            assertOneLineMessage(job.errorMessage ?? "", "error.message of \(job.jsonText)")
        default:
            XCTFail("expected exit 2, or exit 0 and a job failing with io: \(result.summary)")
        }
        XCTAssertTrue(Files.isRegularFile(blocker), "the blocking file is untouched")
    }

    func testGarbageOnControlSocketIsRejectedAndDaemonSurvives() throws {
        let name = "survivor.bin"
        let size = 2 * MiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)

        var bigLine = Data(repeating: UInt8(ascii: "a"), count: 2 * MiB)
        bigLine.append(0x0A)
        let garbage: [(String, Data)] = [
            ("random binary", Files.randomData(count: 64 * KiB) + Data([0x0A])),
            ("2 MiB line", bigLine),
            ("invalid JSON", Data("{\"op\": \"list\", \"id\": [1, 2\n".utf8)),
            ("JSON that is not a request", Data("[1, 2, 3]\n\"hello\"\nnull\n".utf8)),
        ]
        for (label, bytes) in garbage {
            let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 5)
            connection.send(bytes)
            let reply = connection.readReply()
            connection.closeConnection()
            switch reply {
            case .closed:
                break
            case .line(let text):
                XCTAssertTrue(text.lowercased().contains("error"), "\(label): reply should be an error: \(text.prefix(300))")
                XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(text.utf8)),
                                "\(label): reply should be JSON: \(text.prefix(300))")
            case .timedOut:
                XCTFail("\(label): no error response and no close within 5 s")
            }
            let stats = cli.run(["stats"])
            guard stats.exitCode == 0, daemon.isRunning else {
                XCTFail("daemon did not survive \(label): \(stats.summary)")
                return
            }
        }

        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
    }
}
