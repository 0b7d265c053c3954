import Foundation
import XCTest

/// curl's network options on jobs (issue 14, item 6), against real servers on the loopback:
/// nginx (gzip, auth_basic, a slow location, `/host`), `net_server.py` (a forward proxy,
/// Digest, redirects, a server on ::1 only) and a port that never answers. Each option reaches
/// the transfer, `show --curl`'s command does the same with the real curl, and the password
/// shows nowhere.
final class NetworkOptionTests: IntegrationTestCase {
    private static let secret = "nEtOpTs-s3cret-4711"
    private var servers: [NetServer] = []

    override func tearDownWithError() throws {
        if let run = testRun, run.totalFailureCount > 0 {
            for server in servers { print("---- net server \(server.baseURL):\n\(server.describeLog())\n----") }
        }
        for server in servers { server.stop() }
        servers = []
        try super.tearDownWithError()
    }

    private func netServer(_ name: String, bind: String = "127.0.0.1") throws -> NetServer {
        let server = try NetServer(directory: workDir.appendingPathComponent(name), outputURL: workDir.appendingPathComponent("\(name).out"),
                                   scratch: workDir.appendingPathComponent("\(name)-curl"), bind: bind, password: Self.secret)
        try server.start()
        servers.append(server)
        return server
    }

    /// Runs `show ID --curl`'s command with the real curl, writing to `output` instead of the
    /// job's partial file, with `secret` put back where the command says `<redacted>`.
    @discardableResult
    private func runShowCurl(_ id: Int, output: URL, secret: String? = nil,
                             file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let shown = cli.run(["show", String(id), "--curl"])
        XCTAssertEqual(shown.exitCode, 0, shown.summary, file: file, line: line)
        let partial = try XCTUnwrap(try cli.job(id)["partialPath"] as? String, file: file, line: line)
        var command = shown.trimmedStdout.replacingOccurrences(of: partial, with: output.path)
        if let secret { command = command.replacingOccurrences(of: "<redacted>", with: secret) }
        let curl = cli.runner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", command + " --silent --show-error"], timeout: 30)
        XCTAssertEqual(curl.exitCode, 0, "\(command): \(curl.summary)", file: file, line: line)
        return shown.trimmedStdout
    }

    /// The job ends in `state` (polled).
    @discardableResult
    private func awaitEnd(_ id: Int, _ state: String, timeout: TimeInterval = 25) throws -> JobJSON {
        try cli.awaitState(id, state, timeout: timeout)
    }

    // MARK: --proxy, --noproxy

    /// The daemon runs with `no_proxy=127.0.0.1,localhost` (as every child of the harness):
    /// a job's own `--proxy` is not bypassed by it, only by the job's `--noproxy`.
    func testADownloadGoesThroughTheProxyAndNoProxyBypassesIt() throws {
        let proxy = try netServer("proxy")
        let size = 300 * KiB
        let sha = try makeSource("p.bin", size: size)
        let url = nginx.url(.files, "p.bin")

        let id = try cli.download(url, to: destination("p.bin"), ["--proxy", proxy.baseURL])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: destination("p.bin"), sha256: sha, size: size)
        XCTAssertEqual(try proxy.proxied(), [url], "the request went through the proxy")
        let job = try cli.job(id)
        XCTAssertEqual((job["network"] as? [String: Any])?["proxy"] as? String, proxy.baseURL, job.jsonText)
        XCTAssertTrue(cli.run(["show", String(id)]).stdout.contains("proxy:     \(proxy.baseURL) (for every host"))

        // show --curl's command takes the same way, with the same bytes.
        let command = try runShowCurl(id, output: workDir.appendingPathComponent("curl-p.bin"))
        XCTAssertTrue(command.contains("--proxy \(proxy.baseURL) --noproxy ''"), command)
        XCTAssertEqual(try cli.sha256(of: workDir.appendingPathComponent("curl-p.bin")), sha)
        XCTAssertEqual(try proxy.proxied(), [url, url], "curl went through the proxy too")

        let direct = try cli.download(url, to: destination("direct.bin"), ["--proxy", proxy.baseURL, "--noproxy", "127.0.0.1"])
        try waitCompleted(direct)
        try assertCompletedDownload(direct, at: destination("direct.bin"), sha256: sha, size: size)
        XCTAssertEqual(try proxy.proxied().count, 2, "--noproxy 127.0.0.1 went around the proxy")
        XCTAssertTrue(try runShowCurl(direct, output: workDir.appendingPathComponent("curl-direct.bin")).contains("--noproxy 127.0.0.1"))
        XCTAssertEqual(try proxy.proxied().count, 2)
    }

    /// A backup's MKCOLs and PUTs all take the job's way.
    func testABackupGoesThroughTheProxy() throws {
        let proxy = try netServer("proxy")
        let tree = workDir.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Files.randomData(count: 50 * KiB).write(to: tree.appendingPathComponent("a.bin"))
        try Files.randomData(count: 70 * KiB).write(to: tree.appendingPathComponent("sub/b.bin"))
        let result = try cli.backup(tree, to: nginx.davURL("net"), ["--proxy", proxy.baseURL, "--max-time", "30"])
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "\(result)")
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        for name in ["a.bin", "sub/b.bin"] {
            XCTAssertEqual(try Data(contentsOf: nginx.davRoot.appendingPathComponent("net/" + name)),
                           try Data(contentsOf: tree.appendingPathComponent(name)), name)
        }
        let methods = try proxy.log().filter { $0["proxied"] as? Bool == true }.compactMap { $0["method"] as? String }
        XCTAssertEqual(methods.filter { $0 == "PUT" }.count, 2, "\(methods)")
        XCTAssertTrue(methods.contains("MKCOL"), "the collections were asked for through the proxy: \(methods)")
        XCTAssertEqual(try cli.jobs().compactMap { ($0["network"] as? [String: Any])?["proxy"] as? String },
                       [proxy.baseURL, proxy.baseURL])
    }

    // MARK: --connect-timeout, --max-time

    func testConnectTimeoutGivesUpOnAHostThatNeverAnswers() throws {
        let blackhole = try Blackhole()
        let started = Date()
        let id = try cli.download("http://127.0.0.1:\(blackhole.port)/never.bin", to: destination("never.bin"),
                                  ["--connect-timeout", "1.5", "--retry", "0"])
        let job = try awaitEnd(id, "failed", timeout: 20)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "not the default 30 s")
        XCTAssertEqual(job.errorCode, "network", job.jsonText)
        // libcurl words a connect that timed out in more than one way, by where its timer caught
        // it ("Connection timeout after 1500 ms", "Timeout was reached", "... timed out ..."),
        // all CURLE_OPERATION_TIMEDOUT.
        let message = job.errorMessage?.lowercased() ?? ""
        XCTAssertTrue(message.contains("timeout") || message.contains("timed out"), job.jsonText)
        let attempt = try XCTUnwrap(try cli.json(["show", String(id)]) as? [String: Any])["attemptLog"] as? [[String: Any]]
        let total = try XCTUnwrap(((attempt?.first?["metrics"]) as? [String: Any])?["totalMs"] as? Double, job.jsonText)
        XCTAssertGreaterThanOrEqual(total, 1400, "it waited for the connection as long as asked")
        XCTAssertLessThan(total, 5000, "and no longer")
    }

    func testMaxTimeFailsTheAttemptWithATypedReasonAndIsNotRetried() throws {
        let size = 4 * MiB
        try makeSource("slow.bin", size: size)
        let id = try cli.download(nginx.url(.slow, "slow.bin"), to: destination("slow.bin"), ["--max-time", "1.5", "--retry", "3"])
        let job = try awaitEnd(id, "failed", timeout: 20)
        XCTAssertEqual(job.errorCode, "timed_out", job.jsonText)
        XCTAssertEqual(job.errorMessage, "the attempt took longer than --max-time 1.5 s")
        XCTAssertEqual(job.attempts, 1, "not retried: \(job.jsonText)")
        let detail = try XCTUnwrap(try cli.json(["show", String(id)]) as? [String: Any])
        let attempts = try XCTUnwrap(detail["attemptLog"] as? [[String: Any]])
        XCTAssertEqual(attempts.first?["notRetried"] as? String, "max_time", "\(attempts)")
        let total = try XCTUnwrap((attempts.first?["metrics"] as? [String: Any])?["totalMs"] as? Double)
        XCTAssertGreaterThanOrEqual(total, 1450)
        XCTAssertLessThan(total, 4000)
        XCTAssertGreaterThan(job.bytesDone ?? 0, 0, "the bytes it got are kept for a retry")
        XCTAssertLessThan(job.bytesDone ?? size, size)
        let shown = cli.run(["show", String(id)]).stdout
        XCTAssertTrue(shown.contains("not retried: --max-time is a limit, not a fault"), shown)
        XCTAssertTrue(shown.contains("timeouts:  at most 1.5 s per attempt (--max-time)"), shown)

        // The waits of a rate limit count too (the transfer is paused then, not slow).
        try makeSource("limited.bin", size: MiB)
        let limited = try cli.download(nginx.url(.files, "limited.bin"), to: destination("limited.bin"),
                                       ["--max-time", "1", "--limit-rate", "64K"])
        let timedOut = try awaitEnd(limited, "failed", timeout: 20)
        XCTAssertEqual(timedOut.errorCode, "timed_out", timedOut.jsonText)
        XCTAssertLessThan(timedOut.bytesDone ?? MiB, MiB / 2)
    }

    // MARK: --compressed

    /// Text that gzip shrinks well, `size` bytes.
    private func compressibleSource(_ name: String, size: Int) throws -> String {
        var text = ""
        var line = 0
        while text.utf8.count < size {
            text += "line \(line) of a file that compresses, \(line % 97) \(line % 13)\n"
            line += 1
        }
        let file = nginx.localPath(name)
        try Data(text.utf8.prefix(size)).write(to: file)
        return try cli.sha256(of: file)
    }

    func testACompressedDownloadArrivesDecoded() throws {
        let size = 3 * MiB
        let sha = try compressibleSource("c.txt", size: size)
        let id = try cli.download(nginx.url(.gzip, "c.txt"), to: destination("c.txt"), ["--compressed"])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: destination("c.txt"), sha256: sha, size: size)
        let sent = nginx.gets(.gzip, "c.txt")
        XCTAssertEqual(sent.count, 1, nginx.describeLog())
        XCTAssertLessThan(sent.first?.bodyBytesSent ?? size, size / 4, "it came compressed: \(nginx.describeLog())")

        let command = try runShowCurl(id, output: workDir.appendingPathComponent("curl-c.txt"))
        XCTAssertTrue(command.contains(" --compressed "), command)
        XCTAssertEqual(try cli.sha256(of: workDir.appendingPathComponent("curl-c.txt")), sha, "curl decodes it the same")
        XCTAssertLessThan(nginx.gets(.gzip, "c.txt").last?.bodyBytesSent ?? size, size / 4)

        // Without --compressed nothing is asked for, and the bytes come as they are.
        let plain = try cli.download(nginx.url(.gzip, "c.txt"), to: destination("plain.txt"))
        try waitCompleted(plain)
        try assertCompletedDownload(plain, at: destination("plain.txt"), sha256: sha, size: size)
        XCTAssertEqual(nginx.gets(.gzip, "c.txt").last?.bodyBytesSent, size)
    }

    /// Paused mid-way, a download served compressed cannot continue by a range (its bytes on
    /// disk are decoded, a range counts encoded ones): the next attempt starts over, asks for
    /// the encoding again, and the file ends whole — never a mix of both.
    func testAnInterruptedCompressedDownloadStartsOverAndEndsWhole() throws {
        let size = 2 * MiB
        let sha = try makeSource("z.bin", size: size)
        let id = try cli.download(nginx.url(.slowGzip, "z.bin"), to: destination("z.bin"), ["--compressed"])
        let paused = try pauseAfterProgress(id, atLeast: 256 * KiB, total: size)
        XCTAssertNil(jsonInt(paused["bytesTotal"]), "the decoded size is not known: \(paused.jsonText)")
        XCTAssertEqual(jsonInt(try cli.resumeData(id)["bytesReceived"]), 0, "no bytes to continue by a range")
        let command = cli.run(["show", String(id), "--curl"]).stdout
        XCTAssertTrue(command.contains("--compressed") && !command.contains("--continue-at"), command)

        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id, timeout: 30)
        try assertCompletedDownload(id, at: destination("z.bin"), sha256: sha, size: size)
        let requests = nginx.awaitGets(.slowGzip, "z.bin", count: 2)
        XCTAssertEqual(requests.count, 2, nginx.describeLog())
        XCTAssertEqual(requests.map(\.range), [nil, nil], "never a range: \(nginx.describeLog())")
        let attempts = try XCTUnwrap((try cli.json(["show", String(id)]) as? [String: Any])?["attemptLog"] as? [[String: Any]])
        XCTAssertEqual(attempts.last?["startedOver"] as? String, "content_decoded", "\(attempts)")
        XCTAssertEqual(jsonInt(attempts.last?["rangeStart"]), 0)
        XCTAssertTrue(cli.run(["show", String(id)]).stdout.contains("decoded bytes cannot be continued by a range"))
    }

    /// A server that does not compress: `--compressed` costs nothing, an interrupted download
    /// continues by a range as any other.
    func testACompressedDownloadServedPlainContinuesByARange() throws {
        let size = 2 * MiB
        let sha = try makeSource("plain.bin", size: size)
        let id = try cli.download(nginx.url(.slow, "plain.bin"), to: destination("plain.bin"), ["--compressed"])
        let paused = try pauseAfterProgress(id, atLeast: 256 * KiB, total: size)
        XCTAssertEqual(jsonInt(paused["bytesTotal"]), size)
        let command = cli.run(["show", String(id), "--curl"]).stdout
        XCTAssertTrue(command.contains("--continue-at") && !command.contains("--compressed"), command)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id, timeout: 30)
        try assertCompletedDownload(id, at: destination("plain.bin"), sha256: sha, size: size)
        let requests = nginx.awaitGets(.slow, "plain.bin", count: 2)
        XCTAssertNil(requests.first?.range)
        XCTAssertNotNil(requests.last?.range, "continued by a range: \(nginx.describeLog())")
    }

    // MARK: --user, --netrc-file

    /// Every output that shows the job, and the daemon's log, without the password.
    private func assertNoOutputShowsTheSecret(of id: Int, file: StaticString = #filePath, line: UInt = #line) {
        let idText = String(id)
        for arguments in [["show", idText], ["--json", "show", idText], ["show", idText, "--curl"], ["list"], ["--json", "list"],
                          ["--json", "events"], ["events"]] {
            let result = cli.run(arguments)
            XCTAssertEqual(result.exitCode, 0, result.summary, file: file, line: line)
            XCTAssertFalse(result.stdout.contains(Self.secret) || result.stderr.contains(Self.secret),
                           "\(arguments) shows the password: \(result.summary)", file: file, line: line)
        }
        let log = (try? String(contentsOf: daemon.logURL, encoding: .utf8)) ?? ""
        XCTAssertFalse(log.isEmpty, file: file, line: line)
        XCTAssertFalse(log.contains(Self.secret), "the daemon log shows the password", file: file, line: line)
    }

    func testBasicCredentialsReachTheServerAndTheirPasswordShowsNowhere() throws {
        try nginx.allow(user: "alice", password: Self.secret)
        let size = 200 * KiB
        let sha = try makeSource("b.bin", size: size)
        let id = try cli.download(nginx.url(.auth, "b.bin"), to: destination("b.bin"), ["--user", "alice:\(Self.secret)"])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: destination("b.bin"), sha256: sha, size: size)
        XCTAssertEqual(nginx.gets(.auth, "b.bin").map(\.status), [401, 200], "no credentials until asked: \(nginx.describeLog())")

        let job = try cli.job(id)
        let network = try XCTUnwrap(job["network"] as? [String: Any], job.jsonText)
        XCTAssertEqual(network["user"] as? String, "alice")
        XCTAssertEqual(network["password"] as? String, "<redacted>")
        XCTAssertTrue(cli.run(["show", String(id)]).stdout.contains("user:      alice, password <redacted>"))
        let command = try runShowCurl(id, output: workDir.appendingPathComponent("curl-b.bin"), secret: Self.secret)
        XCTAssertTrue(command.contains("--anyauth --user 'alice:<redacted>'"), command)
        XCTAssertEqual(try cli.sha256(of: workDir.appendingPathComponent("curl-b.bin")), sha)
        assertNoOutputShowsTheSecret(of: id)
    }

    func testAWrongPasswordFailsWithTheServersStatusAndIsNotRetried() throws {
        try nginx.allow(user: "alice", password: Self.secret)
        try makeSource("w.bin", size: 64 * KiB)
        let id = try cli.download(nginx.url(.auth, "w.bin"), to: destination("w.bin"), ["--user", "alice:wrong", "--retry", "3"])
        let job = try awaitEnd(id, "failed")
        XCTAssertEqual(job.errorCode, "http_status", job.jsonText)
        XCTAssertEqual(job.httpStatus, 401)
        XCTAssertEqual(job.attempts, 1)
        let attempts = try XCTUnwrap((try cli.json(["show", String(id)]) as? [String: Any])?["attemptLog"] as? [[String: Any]])
        XCTAssertEqual(attempts.first?["notRetried"] as? String, "permanent")
        XCTAssertEqual(nginx.gets(.auth, "w.bin").map(\.status), [401, 401], "asked once, answered once, refused")
        XCTAssertFalse(Files.exists(destination("w.bin")))
    }

    func testANetrcFileGivesTheCredentials() throws {
        try nginx.allow(user: "alice", password: Self.secret)
        let size = 100 * KiB
        let sha = try makeSource("n.bin", size: size)
        let netrc = workDir.appendingPathComponent("netrc")
        try "machine 127.0.0.1 login alice password \(Self.secret)\n".write(to: netrc, atomically: true, encoding: .utf8)
        let id = try cli.download(nginx.url(.auth, "n.bin"), to: destination("n.bin"), ["--netrc-file", netrc.path])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: destination("n.bin"), sha256: sha, size: size)
        XCTAssertTrue(cli.run(["show", String(id)]).stdout.contains("netrc:     \(netrc.path)"))
        let command = try runShowCurl(id, output: workDir.appendingPathComponent("curl-n.bin"))
        XCTAssertTrue(command.contains("--anyauth --netrc-file \(netrc.path)"), command)
        XCTAssertEqual(try cli.sha256(of: workDir.appendingPathComponent("curl-n.bin")), sha)

        // --netrc is the netrc of whoever queues the job, named by its path.
        let home = workDir.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: netrc, to: home.appendingPathComponent(".netrc"))
        let queued = cli.runner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                    ["HOME=\(home.path)", binaries.transferctl.path, "--state-dir", cli.stateDir.path,
                                     "download", nginx.url(.auth, "n.bin"), "-o", destination("home.bin").path, "-n"], timeout: 20)
        XCTAssertEqual(queued.exitCode, 0, queued.summary)
        let homeJob = try XCTUnwrap(Int(queued.trimmedStdout), queued.summary)
        try waitCompleted(homeJob)
        try assertCompletedDownload(homeJob, at: destination("home.bin"), sha256: sha, size: size)
        XCTAssertEqual((try cli.job(homeJob)["network"] as? [String: Any])?["netrcFile"] as? String,
                       home.appendingPathComponent(".netrc").path)

        // A file the daemon cannot read is refused when queued, in one line.
        let missing = cli.run(["download", nginx.url(.auth, "n.bin"), "-o", destination("x.bin").path,
                               "--netrc-file", workDir.appendingPathComponent("missing").path])
        XCTAssertEqual(missing.exitCode, 2, missing.summary)
        assertOneLineMessage(missing.stderr, "missing netrc")
        XCTAssertTrue(missing.stderr.contains("cannot read it: No such file or directory"), missing.stderr)
        assertNoOutputShowsTheSecret(of: id)
    }

    func testDigestCredentialsForADownloadAndAnUploadThatSendsItsBodyTwice() throws {
        let server = try netServer("digest")
        let size = 300 * KiB
        let sha = try server.createFile(named: "d.bin", size: size)
        let id = try cli.download(server.url("digest", "d.bin"), to: destination("d.bin"), ["--user", "alice:\(Self.secret)"])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: destination("d.bin"), sha256: sha, size: size)
        let asked = try server.requestHeaders("/digest/d.bin").map { $0["authorization"] ?? "" }
        XCTAssertEqual(asked.count, 2, server.describeLog())
        XCTAssertEqual(asked.first, "", "nothing before the challenge")
        XCTAssertTrue(asked.last?.hasPrefix("Digest username=\"alice\"") == true, "\(asked)")
        XCTAssertFalse(asked.contains { $0.contains(Self.secret) || $0.hasPrefix("Basic") }, "\(asked)")

        let upload = workDir.appendingPathComponent("up.bin")
        try Files.randomData(count: 256 * KiB).write(to: upload)
        let queued = cli.run(["upload", server.url("digest", "up.bin"), "-T", upload.path, "--user", "alice:\(Self.secret)"])
        XCTAssertEqual(queued.exitCode, 0, queued.summary)
        let uploadID = try XCTUnwrap(Int(queued.trimmedStdout))
        try waitCompleted(uploadID)
        XCTAssertEqual(try cli.sha256(of: server.directory.appendingPathComponent("uploads/up.bin")), try cli.sha256(of: upload))
        XCTAssertEqual(try server.log().filter { $0["method"] as? String == "PUT" }.compactMap { jsonInt($0["status"]) }, [401, 201])

        let wrong = try cli.download(server.url("digest", "d.bin"), to: destination("wrong.bin"), ["--user", "alice:nope"])
        let failed = try awaitEnd(wrong, "failed")
        XCTAssertEqual(failed.httpStatus, 401, failed.jsonText)
        assertNoOutputShowsTheSecret(of: id)
        assertNoOutputShowsTheSecret(of: uploadID)
    }

    /// libcurl sends credentials to another host (or port) after a redirect only with
    /// --location-trusted, and so does transferd where it follows redirects itself (a job with
    /// a secret header).
    func testCredentialsStayWithTheOriginOfTheJob() throws {
        let home = try netServer("home")
        let elsewhere = try netServer("elsewhere")
        let size = 64 * KiB
        let sha = try elsewhere.createFile(named: "x.bin", size: size)
        try FileManager.default.copyItem(at: elsewhere.directory.appendingPathComponent("x.bin"),
                                         to: home.directory.appendingPathComponent("x.bin"))
        let away = home.redirectURL(to: elsewhere.url("basic", "x.bin"))
        let credentials = ["--user", "alice:\(Self.secret)", "--retry", "0"]
        for (name, extra) in [("libcurl.bin", [String]()), ("transferd.bin", ["-H", "X-Api-Key: k"])] {
            let id = try cli.download(away, to: destination(name), credentials + extra)
            let job = try awaitEnd(id, "failed")
            XCTAssertEqual(job.httpStatus, 401, job.jsonText)
        }
        let there = try elsewhere.requestHeaders("/basic/x.bin")
        XCTAssertGreaterThanOrEqual(there.count, 2, "both jobs got there: \(elsewhere.describeLog())")
        XCTAssertEqual(there.compactMap { $0["authorization"] }, [], "no credentials reached another origin")

        // Within the origin they go along, and --location-trusted sends them anywhere.
        let within = try cli.download(home.redirectURL(to: "/basic/x.bin"), to: destination("within.bin"), credentials)
        try waitCompleted(within)
        try assertCompletedDownload(within, at: destination("within.bin"), sha256: sha, size: size)
        let trusted = try cli.download(away, to: destination("trusted.bin"), credentials + ["--location-trusted"])
        try waitCompleted(trusted)
        try assertCompletedDownload(trusted, at: destination("trusted.bin"), sha256: sha, size: size)
        XCTAssertTrue(try elsewhere.requestHeaders("/basic/x.bin").last?["authorization"]?.hasPrefix("Basic ") == true)
    }

    // MARK: -4, -6, --resolve

    func testIPVersionPicksTheAddressOfAHostWithBoth() throws {
        try XCTSkipUnless(Sockets.hasIPv6Loopback, "no IPv6 loopback on this machine")
        let server = try netServer("v6", bind: "::1")
        let size = 100 * KiB
        let sha = try server.createFile(named: "v.bin", size: size)
        let url = "http://dual.test:\(server.port)/files/v.bin"
        let both = ["--resolve", "dual.test:\(server.port):127.0.0.1,::1"]

        let v6 = try cli.download(url, to: destination("v6.bin"), both + ["-6"])
        try waitCompleted(v6)
        try assertCompletedDownload(v6, at: destination("v6.bin"), sha256: sha, size: size)
        XCTAssertEqual((try cli.job(v6)["network"] as? [String: Any]).flatMap { jsonInt($0["ipVersion"]) }, 6)
        let command = try runShowCurl(v6, output: workDir.appendingPathComponent("curl-v6.bin"))
        XCTAssertTrue(command.contains(" -6 --resolve 'dual.test:\(server.port):127.0.0.1,[::1]'"), command)
        XCTAssertEqual(try cli.sha256(of: workDir.appendingPathComponent("curl-v6.bin")), sha)

        // Over IPv4 nothing listens: the job waits for the host, which its probe (the job's
        // way there, -4 included) never finds answering.
        let v4 = try cli.download(url, to: destination("v4.bin"), both + ["-4"])
        let waiting = try cli.awaitJob(v4, "waiting for its host") { $0.state == "waiting" }
        XCTAssertEqual(waiting.errorCode, "network", waiting.jsonText)
        XCTAssertEqual(waiting["waitReason"] as? String, "offline", waiting.jsonText)
        XCTAssertEqual(try server.requestHeaders("/files/v.bin").count, 2, "only the -6 job and curl reached it")
        XCTAssertEqual(cli.run(["cancel", String(v4)]).exitCode, 0)
    }

    func testResolveReachesTheAddressWithTheHostsNameAndKeepsItToItsJob() throws {
        let host = "example.test:\(nginx.port)"
        let id = try cli.download("http://\(host)/host", to: destination("host.txt"), ["--resolve", "\(host):127.0.0.1"])
        try waitCompleted(id)
        XCTAssertEqual(try String(contentsOf: destination("host.txt"), encoding: .utf8), "\(host)\n", "the Host header is the URL's")
        try runShowCurl(id, output: workDir.appendingPathComponent("curl-host.txt"))
        XCTAssertEqual(try String(contentsOf: workDir.appendingPathComponent("curl-host.txt"), encoding: .utf8), "\(host)\n")

        // Another job's entry for the same name is its own: no shared DNS cache entry, no
        // connection of the first job's is reused.
        let other = try cli.download("http://\(host)/host", to: destination("other.txt"),
                                     ["--resolve", "\(host):127.0.0.2", "--retry", "0"])
        let ended = try cli.awaitJob(other, "an attempt ended") { ["waiting", "failed", "completed"].contains($0.state) }
        XCTAssertNotEqual(ended.state, "completed", "it reached 127.0.0.1, the other job's address: \(ended.jsonText)")
        XCTAssertEqual(ended.errorCode, "network", ended.jsonText)
        XCTAssertEqual(nginx.accessLogEntries().filter { $0.path == "/host" }.count, 2, "the first job and curl only")
        XCTAssertEqual(cli.run(["cancel", String(other)]).exitCode, 0)
    }

    // MARK: manifests

    func testAManifestLineCarriesTheOptions() throws {
        let size = MiB
        let sha = try compressibleSource("m.txt", size: size)
        let manifest = workDir.appendingPathComponent("m.jsonl")
        let line: [String: Any] = ["download": ["url": "http://m.test:\(nginx.port)/gzip/m.txt", "output": destination("m.txt").path,
                                                "compressed": true, "resolve": ["m.test:\(nginx.port):127.0.0.1"],
                                                "connectTimeout": 5, "maxTime": "60"]]
        try JSONSerialization.data(withJSONObject: line).write(to: manifest)
        let submitted = try XCTUnwrap(try cli.json(["batch", "submit", manifest.path]) as? [String: Any])
        let batch = try XCTUnwrap(jsonInt(submitted["batch"]), "\(submitted)")
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        let job = try XCTUnwrap(try cli.jobs().first)
        try assertCompletedDownload(try XCTUnwrap(job.id), at: destination("m.txt"), sha256: sha, size: size)
        let network = try XCTUnwrap(job["network"] as? [String: Any], job.jsonText)
        XCTAssertEqual(network["compressed"] as? Bool, true)
        XCTAssertEqual(network["maxTime"] as? Double, 60)
        XCTAssertLessThan(nginx.gets(.gzip, "m.txt").first?.bodyBytesSent ?? size, size / 4)

        let bad = workDir.appendingPathComponent("bad.jsonl")
        try Data(#"{"download":{"url":"http://h/a","output":"/tmp/a","maxTime":0}}"#.utf8).write(to: bad)
        let refused = cli.run(["batch", "submit", bad.path])
        XCTAssertEqual(refused.exitCode, 2, refused.summary)
        XCTAssertTrue(refused.stderr.contains(":1: maxTime must be seconds"), refused.stderr)
    }
}
