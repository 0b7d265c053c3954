import Foundation
import XCTest

/// Crashes, clean shutdown, restart, single-instance locking and an absent daemon.
final class DaemonLifecycleTests: IntegrationTestCase {
    override class var slowRate: String { "1m" }

    func testKill9ThreeTimesThenCompletesWithBoundedRefetch() throws {
        let name = "crash.bin"
        let size = 6 * MiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)

        for fraction in [0.2, 0.45, 0.7] {
            try awaitProgress(id, atLeast: Int(Double(size) * fraction), total: size, timeout: 15)
            daemon.kill9()
            XCTAssertFalse(Files.exists(dest), "no destination after a crash at \(fraction)")
            try daemon.restart()
            let job = try cli.job(id)
            XCTAssertTrue(["queued", "running", "waiting"].contains(job.state ?? ""),
                          "job continues by itself after restart: \(job.jsonText)")
        }
        try waitCompleted(id, timeout: 25)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let gets = nginx.awaitGets(.slow, name, count: 4)
        let sent = gets.reduce(0) { $0 + $1.bodyBytesSent }
        XCTAssertLessThanOrEqual(sent - size, 8 * MiB,
                                 "re-fetched \(sent - size) bytes over 3 crashes; log:\n\(nginx.describeLog())")
        XCTAssertTrue(gets.dropFirst().contains { $0.range != nil },
                      "restarts resume with Range; log:\n\(nginx.describeLog())")
    }

    func testSIGTERMExitsCleanlyAndJobContinuesAfterRestart() throws {
        let name = "term.bin"
        let size = 4 * MiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)

        try awaitProgress(id, atLeast: 512 * KiB, total: size)
        XCTAssertTrue(daemon.terminate(timeout: 5), "SIGTERM exits 0 within 5 s")
        XCTAssertFalse(Files.exists(dest), "no destination after shutdown mid-transfer")

        try daemon.start()
        try waitCompleted(id, timeout: 20)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let gets = nginx.awaitGets(.slow, name, count: 2)
        XCTAssertGreaterThanOrEqual(gets.count, 2, "log:\n\(nginx.describeLog())")
        if gets.count >= 2 {
            XCTAssertNotNil(gets[1].range, "continues from the shutdown checkpoint; log:\n\(nginx.describeLog())")
        }
        let sent = gets.reduce(0) { $0 + $1.bodyBytesSent }
        XCTAssertLessThan(sent, 2 * size, "nginx sent \(sent) bytes for a \(size)-byte file")
    }

    func testPausedJobStaysPausedAcrossRestart() throws {
        let name = "paused.bin"
        try makeSource(name, size: 2 * MiB)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest, ["--paused"])
        try cli.awaitState(id, "paused", timeout: 5)

        XCTAssertTrue(daemon.terminate(timeout: 5))
        try daemon.start()
        XCTAssertEqual(try cli.job(id).state, "paused", "paused jobs stay paused after SIGTERM")
        daemon.kill9()
        try daemon.start()
        XCTAssertEqual(try cli.job(id).state, "paused", "paused jobs stay paused after kill -9")
        XCTAssertEqual(nginx.gets(.slow, name).count, 0, "a paused job never contacted the server")
    }

    func testSIGINTExitsCleanly() throws {
        let name = "int.bin"
        let size = 2 * MiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)
        try awaitProgress(id, atLeast: 256 * KiB, total: size)

        XCTAssertTrue(daemon.terminate(signal: SIGINT, timeout: 5), "SIGINT exits 0 within 5 s")
        XCTAssertFalse(Files.exists(dest))
        try daemon.start()
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
    }

    func testStateFilesArePrivate() throws {
        func octalMode(_ url: URL) -> String? {
            (try? FileManager.default.attributesOfItem(atPath: url.path))?[.posixPermissions]
                .flatMap { ($0 as? NSNumber).map { String($0.intValue & 0o777, radix: 8) } }
        }
        XCTAssertEqual(octalMode(daemon.stateDir), "700", "state directory mode")
        XCTAssertEqual(octalMode(daemon.stateDir.appendingPathComponent("transfers.db")), "600", "database mode")
        XCTAssertEqual(octalMode(URL(fileURLWithPath: daemon.socketPath)), "600", "socket mode")
    }

    func testSecondDaemonOnSameStateDirRefuses() throws {
        let log = workDir.appendingPathComponent("second-transferd.log")
        let second = try ChildProcess(executable: binaries.transferd, arguments: daemon.arguments,
                                      stdoutURL: log, stderrURL: log)
        defer { second.stop() }
        let status = second.waitForExit(timeout: 10)
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        XCTAssertNotNil(status, "second transferd must exit instead of running; output:\n\(output)")
        if let status {
            XCTAssertFalse(second.wasSignalled, "second transferd exits by itself, not by a signal")
            XCTAssertNotEqual(status, 0, "second transferd exit status; output:\n\(output)")
        }
        XCTAssertFalse(output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
                       "second transferd explains why it refuses")

        XCTAssertTrue(daemon.isRunning, "first daemon unaffected")
        let stats = cli.run(["stats"])
        XCTAssertEqual(stats.exitCode, 0, "first daemon still answers: \(stats.summary)")
    }

    /// libcurl is opened at run time, not linked (curl_library.c): `transferctl` queues and
    /// answers without it, and a daemon that cannot open it says why in one line and exits 1.
    /// Run with libcurl hidden from the loader: /dev/null bound over it in a mount namespace of
    /// the commands' own (skipped where the test may not make one).
    func testTheCLIRunsWithoutLibcurlAndADaemonWithoutItSaysWhy() throws {
        func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        func withoutLibcurl(_ command: [String]) -> CommandResult {
            let script = "lib=$(readlink -f \"$(ldconfig -p | awk '/libcurl\\.so\\.4 /{ print $NF; exit }')\") && "
                + "exec unshare --mount sh -c 'mount --bind /dev/null \"$0\" && exec \"$@\"' \"$lib\" "
                + command.map(quote).joined(separator: " ")
            return cli.runner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script], timeout: 20)
        }
        let probe = withoutLibcurl(["true"])
        guard probe.exitCode == 0 else { throw XCTSkip("cannot hide libcurl in a mount namespace here: \(probe.summary)") }

        let sha = try makeSource("nocurl.bin", size: 100 * KiB)
        let dest = destination("nocurl.bin")
        let ctl = [cli.binaries.transferctl.path, "--state-dir", cli.stateDir.path]
        let queued = withoutLibcurl(ctl + ["download", nginx.url(.files, "nocurl.bin"), "-o", dest.path])
        XCTAssertEqual(queued.exitCode, 0, queued.summary)
        let id = try XCTUnwrap(Int(queued.trimmedStdout), queued.summary)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: 100 * KiB)
        let stats = withoutLibcurl(ctl + ["stats"])
        XCTAssertEqual(stats.exitCode, 0, stats.summary)

        let other = workDir.appendingPathComponent("no-libcurl-daemon")
        let refused = withoutLibcurl([binaries.transferd.path, "--state-dir", other.path])
        XCTAssertEqual(refused.exitCode, 1, refused.summary)
        assertOneLineMessage(refused.stderr, refused.command)
        XCTAssertTrue(refused.stderr.hasPrefix("transferd: cannot load libcurl: "), refused.summary)
        XCTAssertFalse(Files.exists(other), "a daemon that cannot transfer makes no state directory")
        XCTAssertTrue(daemon.isRunning, "the running daemon is untouched")
    }

    func testCLIExits3WhenDaemonIsNotRunning() throws {
        let neverStarted = try CLI(binaries: binaries, stateDir: workDir.appendingPathComponent("no-daemon"),
                                   scratch: workDir.appendingPathComponent("cli-no-daemon"))
        for arguments in [["stats"], ["list"], ["download", nginx.url(.files, "x.bin"), "-o", destination("x").path]] {
            let result = neverStarted.run(arguments)
            XCTAssertEqual(result.exitCode, 3, result.summary)
            assertOneLineMessage(result.stderr, result.command)
        }

        // The message names the state directory it tried and the command that starts a daemon
        // there; that command, run as printed, makes the CLI's next try work.
        let message = neverStarted.run(["stats"]).stderr
        let stateDir = workDir.appendingPathComponent("no-daemon").path
        XCTAssertTrue(message.contains("state directory \(stateDir)"), message)
        let marker = "start a daemon there with: "
        let command = try XCTUnwrap(message.range(of: marker).map { String(message[$0.upperBound...].dropLast(2)) }, message)
        XCTAssertEqual(command, "transferd --state-dir \(stateDir)", message)
        let started = try ChildProcess(executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exec " + command],
                                       stdoutURL: workDir.appendingPathComponent("printed-daemon.log"),
                                       stderrURL: workDir.appendingPathComponent("printed-daemon.log"),
                                       environment: ["PATH": binaries.transferd.deletingLastPathComponent().path + ":/usr/bin:/bin"])
        defer { started.stop() }
        XCTAssertTrue(poll(timeout: 10) { neverStarted.run(["stats"]).exitCode == 0 }, "the printed command starts a daemon the CLI reaches")

        XCTAssertTrue(daemon.terminate(timeout: 5))
        let afterStop = cli.run(["stats"])
        XCTAssertEqual(afterStop.exitCode, 3, "after SIGTERM: \(afterStop.summary)")
        assertOneLineMessage(afterStop.stderr, afterStop.command)
    }
}
