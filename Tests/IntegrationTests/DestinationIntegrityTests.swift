import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A destination only ever appears complete and correct: one unfinished job owns it, however it
/// is spelled or queued; a second daemon cannot write the same partial file; a partial file
/// changed by another program, or planted by another user, is never continued.
final class DestinationIntegrityTests: IntegrationTestCase {
    override class var slowRate: String { "512k" }

    private func assertRefused(_ result: CommandResult, owner: Int, _ context: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.exitCode, 1, "\(context): \(result.summary)", file: file, line: line)
        XCTAssertTrue(result.stderr.contains("job \(owner)"), "\(context): the owner is named: \(result.stderr)", file: file, line: line)
        assertOneLineMessage(result.stderr, context, file: file, line: line)
    }

    func testASecondJobForTheSameDestinationIsRefusedHoweverItIsQueued() throws {
        let sha = try makeSource("a.bin", size: 300 * KiB)
        try makeSource("b.bin", size: 200 * KiB)
        let dest = destination("x.bin")
        let owner = try cli.download(nginx.url(.files, "a.bin"), to: dest, ["--paused"])

        assertRefused(cli.run(["download", nginx.url(.files, "b.bin"), "-o", dest.path]), owner: owner, "the same path")
        assertRefused(cli.run(["download", nginx.url(.files, "b.bin"), "-o", downloads.path + "/sub/../x.bin"]),
                      owner: owner, "spelled with ..")
        let link = workDir.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: downloads)
        assertRefused(cli.run(["download", nginx.url(.files, "b.bin"), "-o", link.path + "/x.bin"]),
                      owner: owner, "through a symlinked directory")
        let relative = cli.runner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", "cd \"$0\" && \"$1\" --state-dir \"$2\" download \"$3\" -o x.bin",
                                                                         downloads.path, binaries.transferctl.path,
                                                                         daemon.stateDir.path, nginx.url(.files, "b.bin")],
                                      timeout: 20)
        assertRefused(relative, owner: owner, "a relative path")

        // A manifest line of another batch: named by its file and line, and nothing of it queued.
        let manifest = try cli.writeManifest([
            manifestLine(key: "other", download: ["url": nginx.url(.files, "b.bin"), "output": destination("other.bin").path]),
            manifestLine(key: "clash", download: ["url": nginx.url(.files, "b.bin"), "output": dest.path]),
        ], to: workDir.appendingPathComponent("m.jsonl"))
        let submitted = cli.run(["batch", "submit", manifest.path])
        assertRefused(submitted, owner: owner, "a manifest line")
        XCTAssertTrue(submitted.stderr.contains("m.jsonl: line 2:"), submitted.stderr)
        XCTAssertEqual(try cli.jobs().count, 1, "nothing of the manifest was queued")

        XCTAssertEqual(cli.run(["resume", String(owner)]).exitCode, 0)
        try waitCompleted(owner)
        try assertCompletedDownload(owner, at: dest, sha256: sha, size: 300 * KiB)
    }

    func testResumeDataAndRetryCannotTakeADestinationOwnedByAnotherJob() throws {
        let size = 1 * MiB
        let sha = try makeSource("r.bin", size: size)
        let dest = destination("r.bin")
        let first = try cli.download(nginx.url(.slow, "r.bin"), to: dest)
        try pauseAfterProgress(first, atLeast: 64 * KiB, total: size)
        let exported = workDir.appendingPathComponent("resume.json")
        try Data(cli.run(["resume-data", String(first)]).stdout.utf8).write(to: exported)
        assertRefused(cli.run(["download", "--resume-data", exported.path]), owner: first, "--resume-data")

        // A failed job whose destination another job took meanwhile stays failed on retry.
        let gone = destination("gone.bin")
        let failed = try cli.download(nginx.statusURL(404), to: gone)
        _ = try cli.awaitState(failed, "failed")
        let taker = try cli.download(nginx.url(.files, "r.bin"), to: gone, ["--paused"])
        assertRefused(cli.run(["retry", String(failed)]), owner: taker, "retry")
        XCTAssertEqual(try cli.job(failed).state, "failed")
        XCTAssertEqual(cli.run(["cancel", String(taker)]).exitCode, 0)
        _ = try cli.awaitState(taker, "cancelled")
        XCTAssertEqual(cli.run(["retry", String(failed)]).exitCode, 0, "free again: the retry is taken")

        XCTAssertEqual(cli.run(["resume", String(first)]).exitCode, 0)
        try waitCompleted(first)
        try assertCompletedDownload(first, at: dest, sha256: sha, size: size)
    }

    /// Two daemons with different state directories: the second cannot write the partial file
    /// the first is writing, and fails with `busy` naming it; the first completes intact.
    func testASecondDaemonCannotWriteThePartialFileOfARunningTransfer() throws {
        let size = 2 * MiB
        let sha = try makeSource("two.bin", size: size)
        let dest = destination("two.bin")
        let first = try cli.download(nginx.url(.slow, "two.bin"), to: dest)
        try awaitProgress(first, atLeast: 64 * KiB, total: size)
        // Its first checkpoint names its file (a first attempt's file has none until then).
        XCTAssertTrue(poll(timeout: 10) { Files.exists(Files.partialPath(for: dest)) }, "the first download's file is named")

        let otherState = workDir.appendingPathComponent("other-state")
        let otherCLI = try CLI(binaries: binaries, stateDir: otherState, scratch: workDir.appendingPathComponent("other-cli"))
        let other = Daemon(binaries: binaries, stateDir: otherState, logURL: workDir.appendingPathComponent("other.log"),
                           cli: otherCLI)
        try other.start()
        defer { other.stop() }
        let second = try otherCLI.download(nginx.url(.files, "two.bin"), to: dest)
        let failed = try otherCLI.awaitState(second, "failed")
        XCTAssertEqual(failed.errorCode, "busy", failed.jsonText)
        XCTAssertTrue((failed.errorMessage ?? "").contains(Files.partialPath(for: dest).path), failed.jsonText)

        try waitCompleted(first, timeout: 30)
        try assertCompletedDownload(first, at: dest, sha256: sha, size: size)
    }

    /// `show --curl` of a paused download continues its partial file (run with the real curl),
    /// and the job, resumed afterwards, does not trust the bytes curl wrote: it starts over and
    /// says so.
    func testShowCurlContinuesThePartialFileAndAChangedPartialIsNotTrusted() throws {
        let size = 1 * MiB
        let name = "curl.bin"
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)
        try pauseAfterProgress(id, atLeast: 64 * KiB, total: size)

        let line = cli.run(["show", String(id), "--curl"])
        XCTAssertEqual(line.exitCode, 0, line.summary)
        XCTAssertTrue(line.stdout.contains("--continue-at"), line.stdout)
        let curl = cli.runner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", line.trimmedStdout + " --silent --show-error"],
                                  timeout: 30)
        XCTAssertEqual(curl.exitCode, 0, curl.summary)
        let partial = Files.partialPath(for: dest)
        XCTAssertEqual(try cli.sha256(of: partial), sha, "curl continued the partial file into the whole entity")

        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id, timeout: 30)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let attempts = try XCTUnwrap((try cli.json(["show", String(id)]) as? [String: Any])?["attemptLog"] as? [[String: Any]])
        XCTAssertEqual(attempts.last?["startedOver"] as? String, "partial_file_changed", "\(attempts)")
        XCTAssertEqual(jsonInt(attempts.last?["rangeStart"]), 0)
        XCTAssertTrue(cli.run(["show", String(id)]).stdout.contains("changed by another program"))
        XCTAssertTrue(daemon.logTail(lines: 400).contains("changed by another program"))
    }

    /// A partial file another user planted where the job will write is never adopted: the
    /// finished file is this daemon's, not writable by that user.
    func testAPartialFilePlantedByAnotherUserIsNotAdopted() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to plant a file owned by another user")
        let sha = try makeSource("p.bin", size: 100 * KiB)
        let dest = destination("p.bin")
        let planted = Files.partialPath(for: dest)
        try Data(repeating: 0x41, count: 4096).write(to: planted)
        XCTAssertEqual(chown(planted.path, 65534, 65534), 0)
        XCTAssertEqual(chmod(planted.path, 0o666), 0)

        let id = try cli.download(nginx.url(.files, "p.bin"), to: dest)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: 100 * KiB)
        var info = stat()
        XCTAssertEqual(stat(dest.path, &info), 0)
        XCTAssertEqual(info.st_uid, geteuid(), "the finished file belongs to the daemon's user")
        XCTAssertEqual(info.st_mode & 0o002, 0, "and is not writable by others")
    }

    /// An attempt cut off by kill -9 keeps the bytes its checkpoints recorded.
    func testAnAttemptCutOffByACrashIsListedWithItsBytes() throws {
        let size = 4 * MiB
        try makeSource("crash.bin", size: size)
        let id = try cli.download(nginx.url(.slow, "crash.bin"), to: destination("crash.bin"))
        let checkpointed = try cli.awaitJSON("resume-data \(id)", "a checkpoint with bytes", timeout: 20, interval: 0.2,
                                             fetch: { try cli.resumeData(id) }, until: { (jsonInt($0["bytesReceived"]) ?? 0) > 0 })
        let durable = try XCTUnwrap(jsonInt(checkpointed["bytesReceived"]))
        daemon.kill9()
        try daemon.start()
        let attempts = try XCTUnwrap((try cli.json(["show", String(id)]) as? [String: Any])?["attemptLog"] as? [[String: Any]])
        let first = try XCTUnwrap(attempts.first)
        XCTAssertEqual((first["error"] as? [String: Any])?["code"] as? String, "interrupted", "\(first)")
        XCTAssertGreaterThanOrEqual(jsonInt(first["bytes"]) ?? 0, durable, "\(first)")
    }
}
