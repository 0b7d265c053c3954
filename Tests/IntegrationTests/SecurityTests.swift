import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS verification, pinning, client certificates, https → http redirects, secret headers,
/// control-socket peer checks and the partial file's O_NOFOLLOW. TLS servers come from a
/// second nginx (`TLSNginxServer`) that serves the harness nginx's docroot, with a
/// throw-away PKI from `TLSFixture`.
final class SecurityTests: IntegrationTestCase {
    override class var slowRate: String { "256k" }

    private static let secret = "SECRET-TOKEN-123"
    private static let endStates: Set<String> = ["completed", "failed", "cancelled"]

    private(set) var tls: TLSFixture!
    private(set) var tlsNginx: TLSNginxServer!
    /// Daemons a test starts besides the harness's own; stopped in tearDown.
    private var extraDaemons: [(name: String, stop: () -> Void, log: () -> String)] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        tls = try TLSFixture(directory: workDir.appendingPathComponent("tls"))
        tlsNginx = try TLSNginxServer(directory: workDir.appendingPathComponent("tls-nginx"),
                                      docroot: nginx.docroot, tls: tls, slowRate: Self.slowRate)
        try tlsNginx.start()
    }

    override func tearDownWithError() throws {
        let failed = (testRun?.totalFailureCount ?? 0) > 0
        for daemon in extraDaemons {
            daemon.stop()
            if failed {
                print("---- \(name): \(daemon.name) log (tail):\n\(daemon.log())\n----")
            }
        }
        extraDaemons = []
        tlsNginx?.stop()
        if failed, let tlsNginx {
            print("---- \(name): TLS nginx access log:\n\(tlsNginx.describeLog())\n----")
        }
        try super.tearDownWithError()
    }

    // MARK: certificate verification

    func testDownloadTrustingTheCACompletes() throws {
        let name = "trusted.bin"
        let size = MiB + 17
        let sha = try makeSource(name, size: size)
        let dest = destination(name)

        let id = try cli.download(tlsNginx.url(.tls, name), to: dest, ["--cacert", tls.caCert.path])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let job = try cli.job(id)
        let settings = try tlsSettings(job)
        XCTAssertEqual(settings["cacert"] as? String, tls.caCert.path, "tls.cacert: \(job.jsonText)")
        for key in ["pinnedPublicKey", "cert", "key"] {
            XCTAssertTrue(settings[key] is NSNull, "tls.\(key) is null: \(job.jsonText)")
        }
        XCTAssertEqual(settings["insecure"] as? Bool, false, "tls.insecure: \(job.jsonText)")
        XCTAssertEqual(settings["allowInsecureRedirect"] as? Bool, false, "tls.allowInsecureRedirect: \(job.jsonText)")
        let served = tlsNginx.awaitRequests(.tls, path: "/files/\(name)", count: 1)
        XCTAssertEqual(served.map(\.status), [200], "one GET over TLS; log:\n\(tlsNginx.describeLog())")
    }

    func testUnknownCAFailsWithTLSErrorAndIsNotRetried() throws {
        let name = "untrusted.bin"
        try makeSource(name, size: 256 * KiB)
        let dest = destination(name)

        // No --retry 0: a verification failure must not be retried whatever the retry budget.
        let id = try cli.download(tlsNginx.url(.tls, name), to: dest)
        let job = try awaitEnd(id)
        assertTLSFailure(job, mentioning: ["certificate"])
        XCTAssertFalse(Files.exists(dest), "no destination after a TLS failure")
        XCTAssertFalse(Files.exists(Files.partialPath(for: dest)), "no partial file after a TLS failure")
        XCTAssertEqual(tlsNginx.requests(.tls, path: "/files/\(name)").count, 0,
                       "no HTTP request may be sent over an unverified connection")
        let waited = cli.wait([id], timeout: 5)
        XCTAssertEqual(waited.exitCode, 1, "wait on a failed job: \(waited.summary)")
    }

    func testUnrelatedCAIsRejected() throws {
        let name = "other-ca.bin"
        try makeSource(name, size: 64 * KiB)
        let dest = destination(name)

        let id = try cli.download(tlsNginx.url(.tls, name), to: dest, ["--cacert", tls.otherCACert.path])
        let job = try awaitEnd(id)
        assertTLSFailure(job, mentioning: ["certificate"])
        XCTAssertEqual(try tlsSettings(job)["cacert"] as? String, tls.otherCACert.path, job.jsonText)
        XCTAssertFalse(Files.exists(dest), "no destination after a TLS failure")
    }

    func testDaemonCACertIsTheDefaultForEveryJob() throws {
        let name = "daemon-ca.bin"
        let size = 512 * KiB + 3
        let sha = try makeSource(name, size: size)
        let stateDir = workDir.appendingPathComponent("state-ca")
        let caCLI = try CLI(binaries: binaries, stateDir: stateDir, scratch: workDir.appendingPathComponent("cli-ca"))
        let caDaemon = Daemon(binaries: binaries, stateDir: stateDir,
                              logURL: workDir.appendingPathComponent("transferd-ca.log"), cli: caCLI,
                              extraArguments: ["--cacert", tls.caCert.path])
        extraDaemons.append((name: "transferd --cacert", stop: { caDaemon.stop() }, log: { caDaemon.logTail() }))
        try caDaemon.start()

        let dest = destination(name)
        let id = try caCLI.download(tlsNginx.url(.tls, name), to: dest)
        let waited = caCLI.wait([id])
        XCTAssertEqual(waited.exitCode, 0, "the daemon's --cacert is trusted by default: \(waited.summary)\n"
            + "job: \((try? caCLI.job(id))?.jsonText ?? "?")")
        XCTAssertEqual(try caCLI.sha256(of: dest), sha, "destination sha256")

        // A job's own --cacert replaces the default.
        let other = try caCLI.download(tlsNginx.url(.tls, name), to: destination("other-\(name)"),
                                       ["--cacert", tls.otherCACert.path])
        let job = try caCLI.awaitJob(other, "an end state", timeout: 15) { Self.endStates.contains($0.state ?? "") }
        assertTLSFailure(job, mentioning: ["certificate"])
    }

    // MARK: pinning

    func testRightPinnedPublicKeyCompletes() throws {
        let name = "pinned.bin"
        let size = 700 * KiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)

        let id = try cli.download(tlsNginx.url(.tls, name), to: dest,
                                  ["--cacert", tls.caCert.path, "--pinned-pubkey", tls.serverPin])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let job = try cli.job(id)
        XCTAssertEqual(try tlsSettings(job)["pinnedPublicKey"] as? String, tls.serverPin, job.jsonText)
    }

    func testWrongPinnedPublicKeyFailsWithTLSError() throws {
        let name = "mispinned.bin"
        try makeSource(name, size: 64 * KiB)
        let dest = destination(name)
        let wrongPin = "sha256//" + String(repeating: "A", count: 43) + "="
        XCTAssertNotEqual(wrongPin, tls.serverPin)

        let id = try cli.download(tlsNginx.url(.tls, name), to: dest,
                                  ["--cacert", tls.caCert.path, "--pinned-pubkey", wrongPin])
        let job = try awaitEnd(id)
        assertTLSFailure(job, mentioning: ["pinned"])
        XCTAssertEqual(try tlsSettings(job)["pinnedPublicKey"] as? String, wrongPin, job.jsonText)
        XCTAssertFalse(Files.exists(dest), "no destination after a pinning failure")
        XCTAssertEqual(tlsNginx.requests(.tls, path: "/files/\(name)").count, 0,
                       "no HTTP request may be sent to a server with the wrong key")
    }

    // MARK: --insecure

    func testInsecureSkipsVerificationAndIsShown() throws {
        let name = "insecure.bin"
        let size = 300 * KiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)

        let id = try cli.download(tlsNginx.url(.tls, name), to: dest, ["--insecure"])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let job = try cli.job(id)
        let settings = try tlsSettings(job)
        XCTAssertEqual(settings["insecure"] as? Bool, true, "tls.insecure: \(job.jsonText)")
        XCTAssertTrue(settings["cacert"] is NSNull, "tls.cacert is null: \(job.jsonText)")
        let show = cli.run(["show", String(id)])
        XCTAssertEqual(show.exitCode, 0, show.summary)
        XCTAssertTrue(show.stdout.lowercased().contains("insecure"), "human show mentions insecure: \(show.summary)")
    }

    // MARK: client certificates

    func testClientCertificateRequiredByServer() throws {
        let name = "mtls.bin"
        let size = 400 * KiB + 9
        let sha = try makeSource(name, size: size)

        let without = destination("without-cert.bin")
        let refused = try cli.download(tlsNginx.url(.mtls, name), to: without,
                                       ["--cacert", tls.caCert.path, "--retry", "0"])
        let job = try awaitEnd(refused)
        XCTAssertEqual(job.state, "failed", "no client certificate, no download: \(job.jsonText)")
        switch job.errorCode {
        case "tls":
            break
        case "http_status":
            // nginx answers 400 "No required SSL certificate was sent".
            XCTAssertEqual(job.httpStatus, 400, job.jsonText)
        default:
            XCTFail("error.code should be tls or http_status: \(job.jsonText)")
        }
        XCTAssertFalse(Files.exists(without), "no destination without a client certificate")

        let dest = destination(name)
        let id = try cli.download(tlsNginx.url(.mtls, name), to: dest,
                                  ["--cacert", tls.caCert.path, "--cert", tls.clientCert.path,
                                   "--key", tls.clientKey.path])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let completed = try cli.job(id)
        let settings = try tlsSettings(completed)
        XCTAssertEqual(settings["cert"] as? String, tls.clientCert.path, "tls.cert: \(completed.jsonText)")
        XCTAssertEqual(settings["key"] as? String, tls.clientKey.path, "tls.key: \(completed.jsonText)")
        let served = tlsNginx.awaitRequests(.mtls, path: "/files/\(name)", count: 1).filter { $0.status == 200 }
        XCTAssertEqual(served.count, 1, "one 200 on the client-cert server; log:\n\(tlsNginx.describeLog())")
        XCTAssertTrue(served.first?.clientSubject.contains("transferd test client") ?? false,
                      "nginx saw the client certificate: \(served.first?.clientSubject ?? "none")")
    }

    // MARK: redirects

    func testHTTPSToHTTPRedirectIsRefusedUnlessAllowed() throws {
        let name = "redirected.bin"
        let size = 200 * KiB + 1
        let sha = try makeSource(name, size: size)

        let refusedDest = destination("refused.bin")
        let refused = try cli.download(tlsNginx.redirectToPlainURL(name), to: refusedDest,
                                       ["--cacert", tls.caCert.path])
        let job = try awaitEnd(refused)
        XCTAssertEqual(job.state, "failed", job.jsonText)
        XCTAssertEqual(job.errorCode, "insecure_redirect", job.jsonText)
        XCTAssertEqual(job.attempts, 1, "an insecure redirect is not retried: \(job.jsonText)")
        assertOneLineMessage(job.errorMessage ?? "", "error.message of \(job.jsonText)")
        XCTAssertFalse(Files.exists(refusedDest), "no destination after a refused redirect")
        XCTAssertFalse(Files.exists(Files.partialPath(for: refusedDest)), "no partial file after a refused redirect")
        XCTAssertEqual(tlsNginx.awaitRequests(.tls, path: "/to-http/\(name)", count: 1).first?.status, 302,
                       "the https server answered 302; log:\n\(tlsNginx.describeLog())")
        XCTAssertEqual(tlsNginx.requests(.plain, path: "/files/\(name)").count, 0,
                       "the plain-http target must never be contacted; log:\n\(tlsNginx.describeLog())")

        let dest = destination(name)
        let allowed = try cli.download(tlsNginx.redirectToPlainURL(name), to: dest,
                                       ["--cacert", tls.caCert.path, "--allow-insecure-redirect"])
        try waitCompleted(allowed)
        try assertCompletedDownload(allowed, at: dest, sha256: sha, size: size)
        XCTAssertEqual(try tlsSettings(try cli.job(allowed))["allowInsecureRedirect"] as? Bool, true)
        XCTAssertEqual(tlsNginx.awaitRequests(.plain, path: "/files/\(name)", count: 1).map(\.status), [200],
                       "the redirect was followed to plain http; log:\n\(tlsNginx.describeLog())")
    }

    /// A request with secret headers has its redirects followed by transferd, not libcurl
    /// (`RedirectGuard`): https to http is refused all the same, before the target is asked.
    func testHTTPSToHTTPRedirectOfARequestWithSecretsIsRefusedToo() throws {
        let name = "redirected-with-key.bin"
        try makeSource(name, size: 64 * KiB)
        let dest = destination(name)
        let id = try cli.download(tlsNginx.redirectToPlainURL(name), to: dest,
                                  ["--cacert", tls.caCert.path, "-H", "X-Api-Key: SECRET-KEY-456"])
        let job = try awaitEnd(id)
        XCTAssertEqual(job.state, "failed", job.jsonText)
        XCTAssertEqual(job.errorCode, "insecure_redirect", job.jsonText)
        XCTAssertEqual(job.attempts, 1, "not retried: \(job.jsonText)")
        XCTAssertEqual(tlsNginx.awaitRequests(.tls, path: "/to-http/\(name)", count: 1).first?.status, 302, tlsNginx.describeLog())
        XCTAssertEqual(tlsNginx.requests(.plain, path: "/files/\(name)").count, 0,
                       "the plain-http target must never be contacted; log:\n\(tlsNginx.describeLog())")
    }

    func testCredentialsAreNotSentToAnotherHostAfterARedirect() throws {
        let name = "elsewhere.bin"
        let size = 64 * KiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(tlsNginx.redirectToOtherHostURL(name), to: dest,
                                  ["-H", "Authorization: Bearer SECRET-TOKEN-123", "-H", "Cookie: s=SECRET-TOKEN-123"])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let first = try XCTUnwrap(tlsNginx.awaitRequests(.plain, path: "/to-localhost/\(name)", count: 1).first)
        XCTAssertTrue(first.authorization.contains("SECRET-TOKEN-123"), "the first host gets the credentials")
        let followed = try XCTUnwrap(tlsNginx.awaitRequests(.plain, path: "/files/\(name)", count: 1).first,
                                     tlsNginx.describeLog())
        XCTAssertEqual(followed.authorization, "", "Authorization must not follow a redirect to another host")
        XCTAssertEqual(followed.cookie, "", "Cookie must not follow a redirect to another host")
    }

    func testFilesTheDaemonCreatesAreNotWorldWritable() throws {
        let name = "perm.bin"
        try makeSource(name, size: 32 * KiB)
        let dest = destination("deep/dir/" + name)
        let id = try cli.download(nginx.url(.files, name), to: dest)
        try waitCompleted(id)
        for path in [dest.path, dest.deletingLastPathComponent().path, daemon.stateDir.path,
                     daemon.stateDir.appendingPathComponent("transfers.db").path] {
            let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            XCTAssertEqual(mode & 0o002, 0, "\(path) is world-writable: \(String(mode, radix: 8))")
        }
    }

    // MARK: uploads

    func testUploadHonoursTLSOptions() throws {
        let source = workDir.appendingPathComponent("upload-source.bin")
        try Files.randomData(count: 16 * KiB).write(to: source)

        let refused = try cli.upload(tlsNginx.sinkURL(.tls, "refused.bin"), ["-T", source.path])
        let job = try awaitEnd(refused)
        assertTLSFailure(job, mentioning: ["certificate"])
        XCTAssertEqual(tlsNginx.requests(.tls, path: "/sink/refused.bin").count, 0,
                       "nothing uploaded over an unverified connection")

        let id = try cli.upload(tlsNginx.sinkURL(.tls, "stored.bin"), ["-T", source.path, "--cacert", tls.caCert.path])
        let waited = cli.wait([id])
        XCTAssertEqual(waited.exitCode, 0, "upload trusting the CA: \(waited.summary)\n"
            + "job: \((try? cli.job(id))?.jsonText ?? "?")")
        XCTAssertEqual(tlsNginx.awaitRequests(.tls, path: "/sink/stored.bin", count: 1).map(\.status), [201],
                       "log:\n\(tlsNginx.describeLog())")
        XCTAssertEqual(try tlsSettings(try cli.job(id))["cacert"] as? String, tls.caCert.path)
    }

    // MARK: secret headers

    func testSecretHeadersAreRedactedEverywhereButSent() throws {
        let name = "secret.bin"
        let size = MiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let headerFile = try writeHeaderFile()

        let url = tlsNginx.slowURL(.plain, name)
        let queued = cli.run(["download", url, "-o", dest.path] + secretHeaderArguments(headerFile))
        XCTAssertEqual(queued.exitCode, 0, queued.summary)
        let id = try XCTUnwrap(queued.trimmedStdout.split(separator: "\n").last.flatMap { Int($0) },
                               "download prints the job id: \(queued.summary)")
        assertNoSecret(in: queued)

        // Pause mid-way so the job has resume data to export.
        try awaitProgress(id, atLeast: 64 * KiB, total: size)
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        let paused = try cli.awaitState(id, "paused", timeout: 5)
        assertRedactedHeaders(paused)

        let idText = String(id)
        for arguments in [["show", idText], ["--json", "show", idText], ["list"], ["--json", "list"],
                          ["resume-data", idText], ["--json", "resume-data", idText]] {
            let result = cli.run(arguments)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            assertNoSecret(in: result)
        }
        // Not asserted to succeed here, but whatever they print must not leak either.
        for arguments in [["show", idText, "--curl"], ["--json", "events"]] {
            assertNoSecret(in: cli.run(arguments, timeout: 5))
        }

        let resume = try cli.resumeData(id)
        let exported = resume["headers"] as? [String] ?? []
        XCTAssertTrue(exported.contains("X-Public: visible"), "resume-data keeps non-secret headers: \(exported)")
        XCTAssertFalse(exported.contains { Self.isSecretHeader($0) }, "resume-data drops secret headers: \(exported)")

        // Redaction is not dropping: the resumed request still carries every header.
        XCTAssertEqual(cli.run(["resume", idText]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let requests = tlsNginx.awaitRequests(.plain, path: "/slow/\(name)", count: 2)
        XCTAssertGreaterThanOrEqual(requests.count, 2, "first GET and resumed GET; log:\n\(tlsNginx.describeLog())")
        assertServerReceivedHeaders(requests)

        assertNoSecret(in: cli.run(["--json", "show", idText]))
        assertDaemonLogHasNoSecret()
    }

    func testPasswordsInURLsAreRedactedEverywhere() throws {
        let name = "userinfo.bin"
        let size = 512 * KiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let plain = tlsNginx.slowURL(.plain, name)
        let url = plain.replacingOccurrences(of: "http://", with: "http://bob:\(Self.secret)@")
        let queued = cli.run(["download", url, "-o", dest.path])
        XCTAssertEqual(queued.exitCode, 0, queued.summary)
        let id = try XCTUnwrap(Int(queued.trimmedStdout), queued.summary)
        try pauseAfterProgress(id, atLeast: 64 * KiB, total: size)
        assertNoOutputShowsTheSecret(of: id)
        let idText = String(id)
        XCTAssertTrue(cli.run(["--json", "show", idText]).stdout.contains("bob:<redacted>@"), "the user name stays")
        XCTAssertEqual(cli.run(["resume", idText]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        assertDaemonLogHasNoSecret()
    }

    /// Every command that prints the job (show, list, resume-data, show --curl, events) succeeds
    /// without the secret.
    private func assertNoOutputShowsTheSecret(of id: Int, file: StaticString = #filePath, line: UInt = #line) {
        let idText = String(id)
        for arguments in [["show", idText], ["--json", "show", idText], ["list"], ["--json", "list"],
                          ["resume-data", idText], ["show", idText, "--curl"], ["--json", "events"], ["events"]] {
            let result = cli.run(arguments)
            XCTAssertEqual(result.exitCode, 0, result.summary, file: file, line: line)
            assertNoSecret(in: result)
        }
    }

    // MARK: secrets in query strings and form fields

    /// A presigned URL: its secret parameters never print (show, list, events, resume-data,
    /// show --curl, the log), every request carries them, and exported resume data cannot be
    /// re-imported without the real URL.
    func testSecretQueryParametersAreRedactedEverywhereButSent() throws {
        let name = "presigned.bin"
        let size = MiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let secret = Self.secret
        let query = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=\(secret)&X-Amz-Security-Token=\(secret)"
            + "&X-Amz-Signature=\(secret)&X-Goog-Signature=\(secret)&sig=\(secret)&API_KEY=\(secret)&visible=yes"
        let queued = cli.run(["download", tlsNginx.slowURL(.plain, name) + "?" + query, "-o", dest.path])
        XCTAssertEqual(queued.exitCode, 0, queued.summary)
        let id = try XCTUnwrap(Int(queued.trimmedStdout), queued.summary)
        assertNoSecret(in: queued)
        try pauseAfterProgress(id, atLeast: 64 * KiB, total: size)
        assertNoOutputShowsTheSecret(of: id)
        let idText = String(id)
        let shown = try cli.job(id)["url"] as? String ?? ""
        XCTAssertTrue(shown.contains("X-Amz-Signature=<redacted>") && shown.contains("visible=yes"),
                      "secret values redacted, the rest kept: \(shown)")

        // Resume data keeps the redaction: re-importing it asks for the real URL.
        let exported = workDir.appendingPathComponent("presigned.resume.json")
        try Data(cli.run(["resume-data", idText]).stdout.utf8).write(to: exported)
        let reimported = cli.run(["download", "--resume-data", exported.path])
        XCTAssertEqual(reimported.exitCode, 2, reimported.summary)
        assertOneLineMessage(reimported.stderr, reimported.command)
        XCTAssertTrue(reimported.stderr.contains("give the real URL"), reimported.summary)
        assertNoSecret(in: reimported)
        XCTAssertEqual(try cli.jobs().count, 1, "no job from redacted resume data")

        XCTAssertEqual(cli.run(["resume", idText]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let requests = tlsNginx.awaitRequests(.plain, path: "/slow/\(name)?\(query)", count: 2)
        XCTAssertGreaterThanOrEqual(requests.count, 2, "both GETs carried the real query; log:\n\(tlsNginx.describeLog())")
        assertDaemonLogHasNoSecret()
    }

    /// An S3 presigned POST: the form fields `policy` and `x-amz-*` and a `token` in the query
    /// never print (nor reach a hook's TRANSFERD_URL), and the server receives them all.
    func testSecretFormFieldsAreRedactedEverywhereButSent() throws {
        let receiver = try UploadReceiver(directory: workDir.appendingPathComponent("receiver"),
                                          outputURL: workDir.appendingPathComponent("receiver.out"))
        try receiver.start()
        defer { receiver.stop() }
        let file = workDir.appendingPathComponent("photo.bin")
        try Files.randomData(count: 32 * KiB).write(to: file)
        let secret = Self.secret
        let fields = ["key=uploads/photo.bin", "policy=\(secret)", "x-amz-credential=\(secret)",
                      "X-Amz-Signature=\(secret)", "x-amz-security-token=\(secret)", "title=visible"]
        let queued = cli.run(["upload", receiver.uploadURL() + "?token=\(secret)", "--on-complete", "echo \"$TRANSFERD_URL\""]
            + fields.flatMap { ["-F", $0] } + ["-F", "file=@\(file.path)"])
        XCTAssertEqual(queued.exitCode, 0, queued.summary)
        let id = try XCTUnwrap(Int(queued.trimmedStdout), queued.summary)
        try waitCompleted(id)
        try cli.awaitJob(id, "its hook run recorded") { !$0.hookRuns.isEmpty }
        let idText = String(id)
        for arguments in [["show", idText], ["--json", "show", idText], ["list"], ["--json", "list"],
                          ["show", idText, "--curl"], ["--json", "events"], ["events"]] {
            let result = cli.run(arguments)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            assertNoSecret(in: result)
        }
        let form = try cli.job(id)["form"] as? [[String: Any]] ?? []
        let values = Dictionary(form.compactMap { part in (part["value"] as? String).map { (part["name"] as? String ?? "", $0) } },
                                uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(values["policy"], "<redacted>", "\(form)")
        XCTAssertEqual(values["X-Amz-Signature"], "<redacted>", "\(form)")
        XCTAssertEqual(values["title"], "visible", "\(form)")

        let upload = try XCTUnwrap(try receiver.awaitUploads(count: 1).first)
        let sent = (upload["parts"] as? [[String: Any]] ?? []).compactMap { part in
            (part["value"] as? String).map { "\(part["name"] as? String ?? "")=\($0)" }
        }
        XCTAssertEqual(sent, fields, "the server received the real values: \(upload)")
        XCTAssertEqual(receiver.requests().first?.path, "/upload?token=\(secret)", receiver.describeLog())
        assertDaemonLogHasNoSecret()
    }

    func testUploadSecretHeadersAreRedactedButSent() throws {
        let source = workDir.appendingPathComponent("secret-upload.bin")
        try Files.randomData(count: 16 * KiB).write(to: source)
        let headerFile = try writeHeaderFile()

        let id = try cli.upload(tlsNginx.sinkURL(.plain, "secret-upload.bin"),
                                ["-T", source.path] + secretHeaderArguments(headerFile))
        try waitCompleted(id)
        assertRedactedHeaders(try cli.job(id))
        let idText = String(id)
        for arguments in [["show", idText], ["--json", "show", idText], ["list"], ["--json", "list"]] {
            let result = cli.run(arguments)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            assertNoSecret(in: result)
        }
        let requests = tlsNginx.awaitRequests(.plain, path: "/sink/secret-upload.bin", count: 1)
        XCTAssertEqual(requests.map(\.status), [201], "log:\n\(tlsNginx.describeLog())")
        assertServerReceivedHeaders(requests)
        assertDaemonLogHasNoSecret()
    }

    func testUnreadableHeaderFileIsAUsageError() throws {
        let missing = workDir.appendingPathComponent("no-such-headers.txt").path
        let result = cli.run(["download", tlsNginx.url(.plain, "x.bin"), "-o", destination("x.bin").path,
                              "-H", "@" + missing])
        XCTAssertEqual(result.exitCode, 2, result.summary)
        assertOneLineMessage(result.stderr, result.command)
        XCTAssertEqual(try cli.jobs().count, 0, "no job created")
    }

    // MARK: control socket peer check

    func testDefaultSocketModeKeepsOtherUsersOut() throws {
        let control = try startDaemonWithExposedSocketDirectory()
        XCTAssertEqual(octalMode(control.socket), "600", "socket mode")
        XCTAssertEqual(octalMode(control.stateDir), "700", "state directory mode")

        let result = runAsNobody(["--socket", control.socket.path, "list"])
        XCTAssertEqual(result.exitCode, 3, "nobody cannot even connect to a 0600 socket: \(result.summary)")
        assertOneLineMessage(result.stderr, result.command)
        XCTAssertEqual(control.run(["stats"]).exitCode, 0, "the owner still can")
    }

    func testOtherUIDIsRefusedAndDaemonKeepsServing() throws {
        let control = try startDaemonWithExposedSocketDirectory()
        let name = "owned.bin"
        try makeSource(name, size: 64 * KiB)
        let queued = control.run(["download", nginx.url(.files, name), "-o", destination(name).path, "--paused"])
        XCTAssertEqual(queued.exitCode, 0, queued.summary)
        let id = try XCTUnwrap(queued.trimmedStdout.split(separator: "\n").last.flatMap { Int($0) }, queued.summary)
        let before = try control.jobs()
        XCTAssertEqual(before.count, 1)

        // Take the file mode out of the way: only the peer-uid check is left.
        XCTAssertEqual(chmod(control.socket.path, 0o666), 0, "chmod socket: errno \(errno)")

        let socket = control.socket.path
        for arguments in [["list"], ["stats"], ["show", String(id)],
                          ["download", nginx.url(.files, name), "-o", destination("nobody.bin").path],
                          ["resume", String(id)], ["pause", String(id)], ["cancel", String(id)]] {
            let result = runAsNobody(["--socket", socket] + arguments)
            XCTAssertEqual(result.exitCode, 1, "refused with exit 1: \(result.summary)")
            assertOneLineMessage(result.stderr, result.command)
            let message = result.stderr.lowercased()
            XCTAssertTrue(["uid", "not allowed", "forbidden", "may not"].contains { message.contains($0) },
                          "the message says why: \(result.summary)")
            XCTAssertFalse(result.stdout.contains("owned.bin"), "nothing is revealed: \(result.summary)")
        }

        // At the protocol level the refusal is an unsolicited `forbidden` line.
        let probe = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(sys.argv[1])
        data = b""
        while b"\\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        sys.stdout.write(data.decode("utf-8", "replace").split("\\n")[0])
        """
        let raw = runAsNobody(["/usr/bin/python3", "-c", probe, socket], direct: true)
        let reply = (try? JSONSerialization.jsonObject(with: Data(raw.trimmedStdout.utf8))) as? [String: Any]
        let error = reply?["error"] as? [String: Any]
        XCTAssertEqual(error?["code"] as? String, "forbidden", "raw reply to another uid: \(raw.summary)")
        XCTAssertEqual(reply?["ok"] as? Bool, false, "raw reply: \(raw.summary)")

        XCTAssertTrue(control.process.isRunning, "the daemon keeps running")
        let stats = control.run(["stats"])
        XCTAssertEqual(stats.exitCode, 0, "the owner is still served: \(stats.summary)")
        let after = try control.jobs()
        XCTAssertEqual(after.compactMap(\.id), [id], "no job created: \(after.map(\.jsonText))")
        XCTAssertEqual(after.first?.state, "paused", "the job was not changed: \(after.map(\.jsonText))")
        XCTAssertEqual(after.first?["updatedAt"] as? String, before.first?["updatedAt"] as? String,
                       "updatedAt unchanged")
    }

    // MARK: partial file

    /// (A later attempt opens its partial file by name without following a symlink, and a file
    /// named over one replaces the link: `PartialFileTests`.)
    func testSymlinkAtPartialPathIsNotFollowed() throws {
        let name = "out.bin"
        try makeSource(name, size: 256 * KiB)
        let dest = destination(name)
        let victim = workDir.appendingPathComponent("victim.txt")
        let victimText = "precious content that must survive\n"
        try victimText.write(to: victim, atomically: true, encoding: .utf8)
        let partial = Files.partialPath(for: dest)
        try FileManager.default.createSymbolicLink(at: partial, withDestinationURL: victim)

        // A first attempt writes into a file without a name, never opened by the partial path:
        // a lone one is named there before its rename, which replaces the link, not its target.
        let id = try cli.download(nginx.url(.files, name), to: dest)
        try waitCompleted(id)
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), victimText, "the symlink's target is untouched")
        XCTAssertEqual(try Data(contentsOf: dest).count, 256 * KiB)
        let victimType = (try? FileManager.default.attributesOfItem(atPath: victim.path))?[.type] as? FileAttributeType
        XCTAssertEqual(victimType, .typeRegular, "the victim is still a regular file")
    }

    // MARK: helpers

    private static func isSecretHeader(_ header: String) -> Bool {
        let lower = header.lowercased()
        return ["authorization:", "cookie:", "proxy-authorization:"].contains { lower.hasPrefix($0) }
    }

    /// `-H @FILE` content: one secret, one public header.
    private func writeHeaderFile() throws -> URL {
        let url = workDir.appendingPathComponent("headers.txt")
        try "Proxy-Authorization: Basic \(Self.secret)\nX-Public: visible\n"
            .write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    private func secretHeaderArguments(_ headerFile: URL) -> [String] {
        ["-H", "Authorization: Bearer \(Self.secret)", "-H", "Cookie: s=\(Self.secret)", "-H", "@" + headerFile.path]
    }

    private func assertNoSecret(in result: CommandResult, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(result.stdout.contains(Self.secret), "secret on stdout: \(result.summary)", file: file, line: line)
        XCTAssertFalse(result.stderr.contains(Self.secret), "secret on stderr: \(result.summary)", file: file, line: line)
    }

    private func assertDaemonLogHasNoSecret(file: StaticString = #filePath, line: UInt = #line) {
        let log = (try? String(contentsOf: daemon.logURL, encoding: .utf8)) ?? ""
        XCTAssertFalse(log.isEmpty, "daemon log exists", file: file, line: line)
        let leaks = log.split(separator: "\n").filter { $0.contains(Self.secret) }
        XCTAssertEqual(leaks, [], "the daemon log must never hold a secret header value", file: file, line: line)
    }

    /// Job JSON `headers`: secrets as `<redacted>`, the public header as given.
    private func assertRedactedHeaders(_ job: JobJSON, file: StaticString = #filePath, line: UInt = #line) {
        let headers = job["headers"] as? [String] ?? []
        XCTAssertTrue(headers.contains("X-Public: visible"), "public header shown: \(job.jsonText)", file: file, line: line)
        for name in ["Authorization", "Cookie", "Proxy-Authorization"] {
            let entry = headers.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            XCTAssertNotNil(entry, "\(name) is listed (redacted): \(job.jsonText)", file: file, line: line)
            XCTAssertTrue(entry?.hasSuffix("<redacted>") ?? false, "\(name) value redacted: \(job.jsonText)",
                          file: file, line: line)
        }
        XCTAssertFalse(job.jsonText.contains(Self.secret), "secret in job JSON: \(job.jsonText)", file: file, line: line)
    }

    /// Every request really carried the secret headers to the server.
    private func assertServerReceivedHeaders(_ requests: [TLSAccessLogEntry],
                                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(requests.isEmpty, "no request logged", file: file, line: line)
        for request in requests {
            XCTAssertEqual(request.authorization, "Bearer \(Self.secret)", "Authorization sent: \(request)",
                           file: file, line: line)
            XCTAssertEqual(request.cookie, "s=\(Self.secret)", "Cookie sent: \(request)", file: file, line: line)
            XCTAssertEqual(request.proxyAuthorization, "Basic \(Self.secret)", "Proxy-Authorization from -H @FILE sent: "
                + "\(request)", file: file, line: line)
            XCTAssertEqual(request.xPublic, "visible", "X-Public from -H @FILE sent: \(request)", file: file, line: line)
        }
    }

    /// Waits until the job has ended (completed, failed or cancelled).
    @discardableResult
    private func awaitEnd(_ id: Int, timeout: TimeInterval = 15) throws -> JobJSON {
        try cli.awaitJob(id, "an end state", timeout: timeout) { Self.endStates.contains($0.state ?? "") }
    }

    /// failed, `tls`, one attempt, and a one-line message with curl's reason.
    private func assertTLSFailure(_ job: JobJSON, mentioning words: [String],
                                  file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(job.state, "failed", job.jsonText, file: file, line: line)
        XCTAssertEqual(job.errorCode, "tls", job.jsonText, file: file, line: line)
        XCTAssertEqual(job.attempts, 1, "a TLS failure is never retried: \(job.jsonText)", file: file, line: line)
        let message = job.errorMessage ?? ""
        assertOneLineMessage(message, "error.message of \(job.jsonText)", file: file, line: line)
        XCTAssertTrue(words.contains { message.lowercased().contains($0) },
                      "error.message names the failed check (\(words)): \(job.jsonText)", file: file, line: line)
    }

    private func tlsSettings(_ job: JobJSON, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try XCTUnwrap(job["tls"] as? [String: Any], "job.tls: \(job.jsonText)", file: file, line: line)
    }

    private func octalMode(_ url: URL) -> String? {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.posixPermissions]
            .flatMap { ($0 as? NSNumber).map { String($0.intValue & 0o777, radix: 8) } }
    }

    /// A daemon whose socket lives in a 0755 directory (`--socket DIR/ctl.sock`), so only the
    /// socket's own mode and the peer check stand between it and other users.
    private struct ControlDaemon {
        let process: ChildProcess
        let stateDir: URL
        let socket: URL
        let logURL: URL
        let runner: CommandRunner
        let transferctl: URL

        func run(_ arguments: [String], timeout: TimeInterval = 20) -> CommandResult {
            runner.run(transferctl, ["--socket", socket.path] + arguments, timeout: timeout)
        }

        func jobs() throws -> [JobJSON] {
            let result = run(["--json", "list"])
            guard result.exitCode == 0,
                  let jobs = (try? JSONSerialization.jsonObject(with: Data(result.trimmedStdout.utf8))) as? [JobJSON]
            else { throw HarnessError("list --json failed: \(result.summary)") }
            return jobs
        }
    }

    private func startDaemonWithExposedSocketDirectory() throws -> ControlDaemon {
        try XCTSkipUnless(getuid() == 0, "needs root to run transferctl as another uid")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs /usr/bin/setpriv")
        let socketDir = workDir.appendingPathComponent("sock")
        try FileManager.default.createDirectory(at: socketDir, withIntermediateDirectories: true)
        // nobody must be able to reach the socket's directory.
        XCTAssertEqual(chmod(workDir.path, 0o755), 0)
        XCTAssertEqual(chmod(socketDir.path, 0o755), 0)
        let stateDir = workDir.appendingPathComponent("state-uid")
        let socket = socketDir.appendingPathComponent("ctl.sock")
        let logURL = workDir.appendingPathComponent("transferd-uid.log")
        let process = try ChildProcess(
            executable: binaries.transferd,
            arguments: ["--state-dir", stateDir.path, "--socket", socket.path, "--log-level", "debug"],
            stdoutURL: logURL, stderrURL: logURL)
        let tail = { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "(no log)" }
        extraDaemons.append((name: "transferd --socket", stop: { process.stop() }, log: tail))
        let control = ControlDaemon(process: process, stateDir: stateDir, socket: socket, logURL: logURL,
                                    runner: try CommandRunner(scratch: workDir.appendingPathComponent("cli-uid")),
                                    transferctl: binaries.transferctl)
        var last: CommandResult?
        let ready = poll(timeout: 15) {
            guard process.isRunning else { return true }
            last = control.run(["stats"], timeout: 5)
            return last?.exitCode == 0
        }
        guard ready, process.isRunning else {
            throw HarnessError("transferd --socket did not become ready: \(last?.summary ?? "none"); log:\n\(tail())")
        }
        return control
    }

    /// Runs transferctl (or, with `direct`, any program) as nobody:nogroup with no groups.
    private func runAsNobody(_ arguments: [String], direct: Bool = false) -> CommandResult {
        let program = direct ? [] : [binaries.transferctl.path]
        return cli.runner.run(URL(fileURLWithPath: "/usr/bin/setpriv"),
                              ["--reuid=nobody", "--regid=nogroup", "--clear-groups"] + program + arguments,
                              timeout: 20)
    }
}
