import Foundation
import XCTest

/// The second hardening round's neighbours (issue 60): a client that hides a NUL in a string
/// the daemon hands to C, and a hook that prints its environment where the daemon keeps AWS
/// credentials. Each attack reproduced as such; each now refused or kept out.
final class NeighbourTrustTests: IntegrationTestCase {
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    static let token = "FQoGZXIvYXdzEXAMPLESESSIONTOKEN"
    override class var daemonEnvironment: [String: String] {
        ["AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": token]
    }

    /// `"path": ".../state/evil\u0000/../../y"` passed the state-directory check (C saw
    /// `state/evil`) and created `state/evil`; headers and URLs were cut the same way.
    func testANULInAnyStringIsABadRequestAndCreatesNothing() throws {
        let state = daemon.stateDir.path
        let lines = [
            #"{"version":1,"command":"add","job":{"kind":"download","url":"http://127.0.0.1:1/x","path":"\#(state)/evil\u0000/../../y","headers":[],"overwrite":false,"priority":"normal","paused":true}}"#,
            #"{"version":1,"command":"add","job":{"kind":"download","url":"http://127.0.0.1:1/x\u0000.evil","path":"/tmp/nul-url","headers":[],"overwrite":false,"priority":"normal","paused":true}}"#,
            #"{"version":1,"command":"add","job":{"kind":"download","url":"http://127.0.0.1:1/x","path":"/tmp/nul-header","headers":["X-A: b\u0000\r\nHost: evil"],"overwrite":false,"priority":"normal","paused":true}}"#,
            #"{"version":1,"command":"limit","down":1e3}"#,
            #"{"version":1,"command":"limit","down":1000.0}"#,
        ]
        for line in lines {
            let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 5)
            defer { connection.closeConnection() }
            _ = connection.send(Data((line + "\n").utf8))
            guard case .line(let answer) = connection.readReply() else { return XCTFail("no answer to \(line)") }
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])
            let error = try XCTUnwrap(object["error"] as? [String: Any], answer)
            XCTAssertEqual(error["code"] as? String, "bad_request", "\(line) → \(answer)")
        }
        XCTAssertFalse(Files.exists(daemon.stateDir.appendingPathComponent("evil")), "nothing made inside the state directory")
        XCTAssertTrue(try cli.jobs().isEmpty, "no request created a job")
        let limits = cli.run(["limit", "--json"])
        XCTAssertFalse(limits.stdout.contains("1000"), "no limit was set: \(limits.stdout)")
        XCTAssertTrue(daemon.isRunning)
    }

    /// A hook inherited the daemon's environment: one that prints it put the S3 secret and
    /// session token into `hook_runs`, which `show --json` prints.
    func testAHookDoesNotSeeTheDaemonsCredentials() throws {
        try makeSource("h.bin", size: 1000)
        let id = try cli.download(nginx.url(.files, "h.bin"), to: destination("h.bin"), ["--on-complete", "env"])
        try waitCompleted(id)
        let runs = try cli.awaitJob(id, "a hook run recorded", timeout: 10) { $0.hookRuns.count >= 1 }.hookRuns
        let shown = cli.run(["show", String(id), "--json"]).stdout
        XCTAssertTrue(shown.contains("TRANSFERD_JOB_ID"), "the hook's output is recorded: \(runs)")
        for secret in [Self.secret, Self.token, "AKIAIOSFODNN7EXAMPLE"] {
            XCTAssertFalse(shown.contains(secret), "the daemon's credential \(secret.prefix(6))… reached a hook")
        }
    }

    /// The backup's scan skips symlinks, but the daemon followed one put in place of a file
    /// after the scan: root's backup sent `/etc/shadow` (here: a stand-in with the file's size
    /// and mtime) and said "completed".
    func testABackupDoesNotFollowASymlinkSwappedInAfterTheScan() throws {
        try restartDaemon(arguments: ["--max-active", "1"])
        let tree = workDir.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        let file = tree.appendingPathComponent("notes.txt")
        try Data(repeating: UInt8(ascii: "n"), count: 4096).write(to: file)
        let secret = workDir.appendingPathComponent("shadow")
        try Data(repeating: UInt8(ascii: "S"), count: 4096).write(to: secret)
        XCTAssertEqual(cli.runner.run(URL(fileURLWithPath: "/usr/bin/touch"), ["-r", file.path, secret.path], timeout: 5).exitCode, 0)
        // A download holds the one slot while the backup's job waits in the queue.
        try makeSource("blocker.bin", size: 8 * MiB)
        let blocker = try cli.download(nginx.url(.slow, "blocker.bin"), to: destination("blocker.bin"))
        try cli.awaitJob(blocker, "the blocker running") { $0.state == "running" }
        let result = try cli.backup(tree, to: nginx.davURL("backup"))
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "\(result)")
        // The neighbour swaps the file for a link to the secret: same size, same mtime.
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: secret.path)
        XCTAssertEqual(cli.run(["cancel", String(blocker)]).exitCode, 0)
        _ = cli.wait(batch: batch, timeout: 25)
        let job = try XCTUnwrap(try cli.jobs().first { jsonInt($0["batch"]) == batch })
        XCTAssertEqual(job.state, "failed", job.jsonText)
        XCTAssertEqual((job["error"] as? [String: Any])?["code"] as? String, "source_changed", job.jsonText)
        for (_, stored) in nginx.davFiles() {
            XCTAssertFalse((try Data(contentsOf: stored)).contains(UInt8(ascii: "S")), "the link's target reached the server")
        }
    }

    /// In a directory another user can write, that user moved the partial file away and put
    /// their own at `.NAME.transferd-part`: the verified download was completed by renaming
    /// whatever was at that name, so the destination held the stranger's 25 bytes.
    func testAVerifiedDownloadPublishesItsOwnBytesNotAPartialFileSwappedInByAnotherUser() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to act as another user")
        let shared = downloads.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(shared.path, 0o777), 0, "a directory others can write")
        let size = 3 * MiB
        let sha = try makeSource("verified.bin", size: size)
        let dest = shared.appendingPathComponent("verified.bin")
        let id = try cli.download(nginx.url(.slow, "verified.bin"), to: dest, ["--sha256", sha])
        let partial = Files.partialPath(for: dest)
        // Named at its first checkpoint.
        guard poll(timeout: 20, { Files.exists(partial) }) else { return XCTFail("the partial file was never named") }
        let moved = shared.appendingPathComponent("moved-away")
        let swap = "mv '\(partial.path)' '\(moved.path)' && printf 'a stranger\\047s 25 bytes\\n' > '\(partial.path)'"
        let result = cli.runner.run(URL(fileURLWithPath: "/usr/bin/setpriv"),
                                    ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/sh", "-c", swap], timeout: 10)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        try waitCompleted(id, timeout: 30)
        XCTAssertEqual(try cli.sha256(of: dest), sha, "the destination holds the bytes downloaded and verified")
        XCTAssertEqual(Files.size(dest), size)
        var info = stat()
        XCTAssertEqual(lstat(dest.path, &info), 0)
        XCTAssertEqual(info.st_uid, geteuid(), "the published file is the daemon's, not the stranger's")
    }

    /// The daemon made no choice about core dumps, so a crash would write its AWS and proxy
    /// secrets to disk; and a `--socket` in a directory anyone can write was taken in silence.
    func testNoCoreDumpAndASocketOthersCouldReplaceIsWarnedOf() throws {
        let limits = try String(contentsOfFile: "/proc/\(try XCTUnwrap(daemon.child?.pid))/limits", encoding: .utf8)
        let core = try XCTUnwrap(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }, limits)
        XCTAssertEqual(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first, "0", String(core))

        let open = workDir.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(open.path, 0o1777), 0)
        let logURL = workDir.appendingPathComponent("open-socket.log")
        let process = try ChildProcess(executable: binaries.transferd,
                                       arguments: ["--state-dir", workDir.appendingPathComponent("state-open").path,
                                                   "--socket", open.appendingPathComponent("t.sock").path],
                                       stdoutURL: logURL, stderrURL: logURL)
        defer { process.stop() }
        let log = { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }
        XCTAssertTrue(poll(timeout: 15) { log().contains("ready") || !process.isRunning }, log())
        XCTAssertTrue(process.isRunning, log())
        XCTAssertTrue(log().contains("is writable by other users"), log())
        XCTAssertFalse(daemon.logTail(lines: 400).contains("is writable by other users"), "its own state directory is private")
    }
}
