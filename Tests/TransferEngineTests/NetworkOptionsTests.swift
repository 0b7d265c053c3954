import Foundation
import Testing
@testable import TransferEngine

/// Each rule of the network options (`NetworkOptions`), as the command line, manifests and the
/// daemon apply them; their redaction, storage and use in decisions.
@Suite struct NetworkOptionsTests {
    let directory = TemporaryDirectory()

    /// Why `body` was refused (nil: it was not).
    private func refusal(_ body: () throws -> Void) -> NetworkOptionError.Reason? {
        do {
            try body()
            return nil
        } catch {
            return (error as? NetworkOptionError)?.reason
        }
    }

    // MARK: Validation, one rule at a time

    @Test(arguments: [("2", 2.0), ("2.5", 2.5), (".5", 0.5), ("0.001", 0.001), ("31536000", 31_536_000.0), ("007", 7.0)])
    func secondsAreDecimalWithFractions(text: String, seconds: Double) throws {
        #expect(try NetworkOptions.seconds(text, .maxTime) == seconds)
    }

    @Test(arguments: ["0", "0.0004", "-1", "1e3", "abc", "", ".", "1.2.3", "31536001", " 2", "inf", "nan", "0x10"])
    func secondsOutsideTheRulesAreRefused(text: String) {
        #expect(refusal { _ = try NetworkOptions.seconds(text, .connectTimeout) } == .seconds)
    }

    @Test(arguments: [0, 0.0004, -1, 31_536_001, .infinity, .nan])
    func theDaemonRefusesSecondsOutsideTheRulesFromAnyClient(seconds: Double) {
        #expect(refusal { try NetworkOptions(connectTimeout: seconds).check() } == .seconds)
        #expect(refusal { try NetworkOptions(maxTime: seconds).check() } == .seconds)
    }

    @Test func refusalsNameTheOptionOrTheManifestField() {
        do {
            _ = try NetworkOptions.seconds("0", .maxTime)
            Issue.record("0 was taken")
        } catch {
            #expect(error.message == "--max-time must be seconds from 0.001 to 31536000 (fractions allowed), got '0'")
            #expect(error.message(naming: error.field.rawValue).hasPrefix("maxTime must be seconds"))
        }
    }

    @Test func aProxyWithoutASchemeIsHTTPAsCurlReadsIt() {
        #expect(NetworkOptions.proxyURL("proxy.example:3128") == "http://proxy.example:3128")
        #expect(NetworkOptions.proxyURL("socks5h://p:1080") == "socks5h://p:1080")
        #expect(NetworkOptions.proxyURL("") == "", "'' is no proxy at all")
    }

    @Test(arguments: ["http://p:3128", "https://p", "socks4://p:1080", "socks4a://p", "socks5://u:pw@p:1080",
                      "socks5h://p", "HTTP://p", ""])
    func proxiesLibcurlSpeaksAreTaken(proxy: String) {
        #expect(refusal { try NetworkOptions(proxy: proxy).check() } == nil)
    }

    @Test func otherProxiesAreRefused() {
        #expect(refusal { try NetworkOptions(proxy: "ftp://p").check() } == .proxyScheme)
        #expect(refusal { try NetworkOptions(proxy: "http://").check() }.map { if case .proxyURL = $0 { true } else { false } } == true)
        #expect(refusal { try NetworkOptions(proxy: "http://p a:3128").check() }.map { if case .proxyURL = $0 { true } else { false } } == true)
        #expect(refusal { try NetworkOptions(proxy: "http://u:<redacted>@p").check() } == .redacted)
    }

    @Test func noProxyIsAListWithoutControls() {
        #expect(refusal { try NetworkOptions(noProxy: "127.0.0.1, .example.com,*").check() } == nil)
        #expect(refusal { try NetworkOptions(noProxy: "a\nb").check() } == .controlCharacters)
    }

    @Test func credentialsSplitAtTheFirstColon() throws {
        #expect(try NetworkOptions.credentials("alice:s3cret") == ("alice", "s3cret"))
        #expect(try NetworkOptions.credentials("alice:") == ("alice", ""), "an empty password, as curl's -u alice:")
        #expect(try NetworkOptions.credentials("alice:a:b") == ("alice", "a:b"))
    }

    @Test func credentialsOutsideTheRulesAreRefused() {
        #expect(refusal { _ = try NetworkOptions.credentials("alice") } == .userWithoutPassword)
        #expect(refusal { _ = try NetworkOptions.credentials(":pw") } == .emptyUser)
        #expect(refusal { _ = try NetworkOptions.credentials("a\r\nX: 1:pw") } == .controlCharacters)
        #expect(refusal { _ = try NetworkOptions.credentials("alice:<redacted>") } == .redacted)
        #expect(refusal { try NetworkOptions(password: "pw").check() } == .emptyUser, "a password needs its user")
    }

    @Test func aMessageNeverShowsThePassword() {
        for text in ["a\u{1}:s3cret", "alice:<redacted>s3cret", "alice:bad\u{7F}s3cret"] {
            do {
                _ = try NetworkOptions.credentials(text)
                Issue.record("\(text) was taken")
            } catch {
                #expect(!error.message.contains("s3cret"), "\(error.message)")
            }
        }
    }

    @Test func theNetrcFileIsAnAbsolutePathTheDaemonCanRead() throws {
        #expect(refusal { try NetworkOptions(netrcFile: "netrc").check() } == .relativePath)
        let missing = NetworkOptions(netrcFile: directory.file("missing")).netrcProblem()
        guard case .unreadable(let uid, let reason)? = missing?.reason else {
            Issue.record("a missing file is refused: \(String(describing: missing))"); return
        }
        #expect(uid == ProcessIdentity.uid)
        #expect(reason == "No such file or directory")
        #expect(missing?.message.hasPrefix("--netrc-file \(directory.file("missing")): transferd (uid ") == true)
        let file = directory.file("netrc")
        try Data("machine h login u password p\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(NetworkOptions(netrcFile: file).netrcProblem() == nil)
    }

    @Test(arguments: [("example.test:443:127.0.0.1", "example.test:443:127.0.0.1"),
                      ("h:80:::1", "h:80:[::1]"),
                      ("h:80:[::1],10.0.0.1", "h:80:[::1],10.0.0.1"),
                      ("h:080:fe80::1", "h:80:[fe80::1]")])
    func resolveEntriesAreHostPortAddresses(given: String, taken: String) throws {
        #expect(try NetworkOptions.resolveEntry(given) == taken)
    }

    @Test func otherResolveEntriesAreRefused() {
        for entry in ["h:80", "h:80:", ":80:1.2.3.4", "+h:80:1.2.3.4", "-h:80:1.2.3.4", "*:80:1.2.3.4", "[::1]:80:1.2.3.4",
                      "h h:80:1.2.3.4"] {
            #expect(refusal { _ = try NetworkOptions.resolveEntry(entry) } == .resolveEntry, "\(entry)")
        }
        for entry in ["h:0:1.2.3.4", "h:65536:1.2.3.4", "h:8x:1.2.3.4", "h::1.2.3.4"] {
            #expect(refusal { _ = try NetworkOptions.resolveEntry(entry) } == .resolvePort, "\(entry)")
        }
        #expect(refusal { _ = try NetworkOptions.resolveEntry("h:80:1.2.3") } == .resolveAddress("1.2.3"))
        #expect(refusal { _ = try NetworkOptions.resolveEntry("h:80:1.2.3.4,") } == .resolveAddress(""))
        #expect(refusal { _ = try NetworkOptions.resolveEntry("h:80:example.com") } == .resolveAddress("example.com"))
        #expect(refusal { try NetworkOptions(resolve: ["h:80"]).check() } == .resolveEntry, "the daemon checks them too")
    }

    @Test func theDaemonRefusesCompressedUploads() {
        var upload = NewJob(kind: .upload, url: "http://h/u", path: "/etc/hostname")
        upload.network = NetworkOptions(compressed: true)
        #expect(throws: JobRefusal.self) { try JobValidation.validate(upload) }
    }

    // MARK: Redaction and the job JSON

    @Test func thePasswordAndTheProxysSecretsAreRedactedInTheJobJSON() throws {
        var job = Job(Job.Fields(id: JobID(rawValue: 1), kind: .download, state: .queued, url: "http://h/f", path: "/d/f", headers: [],
                      overwrite: false, priority: .normal, maxRetries: 7, bytesDone: 0, attempts: 0,
                      createdAt: Timestamp(rawValue: 0), updatedAt: Timestamp(rawValue: 0)))
        job.network = NetworkOptions(proxy: "http://pu:proxy-s3cret@p:3128/?token=t0k", connectTimeout: 2.5, maxTime: 60,
                                     compressed: true, user: "alice", password: "user-s3cret", netrcFile: "/n",
                                     ipVersion: .v6, resolve: ["h:80:[::1]"])
        let text = String(decoding: try JSONEncoder().encode(job), as: UTF8.self)
        #expect(!text.contains("s3cret") && !text.contains("t0k"), "\(text)")
        let network = try #require((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["network"] as? [String: Any])
        #expect(Set(network.keys) == ["proxy", "noProxy", "connectTimeout", "maxTime", "compressed", "user", "password",
                                      "netrcFile", "ipVersion", "resolve"], "every key, null included")
        #expect(network["password"] as? String == "<redacted>")
        #expect(network["proxy"] as? String == "http://pu:<redacted>@p:3128/?token=<redacted>")
        #expect(network["user"] as? String == "alice")
        #expect(network["connectTimeout"] as? Double == 2.5)
        #expect(network["ipVersion"] as? Int == 6)
        #expect(network["noProxy"] is NSNull)
        let decoded = try JSONDecoder().decode(Job.self, from: Data(text.utf8))
        #expect(decoded.network == Redaction.network(job.network))
        #expect(Redaction.network(NetworkOptions(user: "a")).password == nil, "no password, nothing to redact")
    }

    @Test func showCurlSaysItWithCurlsFlagsSecretsRedacted() {
        var job = Job(Job.Fields(id: JobID(rawValue: 1), kind: .download, state: .queued, url: "http://h/f", path: "/d/f", headers: [],
                      overwrite: false, priority: .normal, maxRetries: 7, bytesDone: 0, attempts: 0,
                      createdAt: Timestamp(rawValue: 0), updatedAt: Timestamp(rawValue: 0)))
        job.network = NetworkOptions(proxy: "http://pu:pp@p:3128", noProxy: "127.0.0.1,.local", connectTimeout: 2.5, maxTime: 60,
                                     compressed: true, user: "alice", password: "pw", netrcFile: "/n", ipVersion: .v4,
                                     resolve: ["h:80:127.0.0.1", "h:443:[::1]"])
        let fresh = CurlCommand.line(for: job, resume: nil)
        #expect(fresh == "curl --fail --location --max-redirs 10 --proxy 'http://pu:<redacted>@p:3128' --noproxy 127.0.0.1,.local "
            + "--connect-timeout 2.5 --max-time 60 --anyauth --user 'alice:<redacted>' --netrc-file /n -4 "
            + "--resolve h:80:127.0.0.1 --resolve 'h:443:[::1]' --compressed --output /d/.f.transferd-part http://h/f")
        // Continuing by a range, the next attempt asks for no encoding: neither does the command.
        let resume = ResumeData(job: job, state: ResumeState(partialPath: "/d/.f.transferd-part", bytesDurable: 10,
                                                             validators: Validators(etag: "\"e\"")))
        let continuing = CurlCommand.line(for: job, resume: resume)
        #expect(continuing.contains("--continue-at 10") && !continuing.contains("--compressed"), "\(continuing)")
        job.network = NetworkOptions(netrcFile: "/n")
        #expect(CurlCommand.line(for: job, resume: nil).contains("--anyauth --netrc-file /n --output"))
        job.network = NetworkOptions(proxy: "http://p:3128")
        #expect(CurlCommand.line(for: job, resume: nil).contains("--proxy http://p:3128 --noproxy '' --output"),
                "the job's own proxy is not bypassed by an environment's no_proxy, nor is curl's")
        job.network = NetworkOptions(noProxy: "h")
        #expect(CurlCommand.line(for: job, resume: nil).contains("--noproxy h --output"))
    }

    // MARK: Storage

    @Test func theOptionsAndDecodedBytesAreStoredWithTheJob() throws {
        let store = try JobStore(path: directory.database("t.db"))
        var new = NewJob(kind: .download, url: "http://h/f", path: directory.file("f"))
        let network = NetworkOptions(proxy: "socks5h://p:1080", noProxy: "*", connectTimeout: 0.25, maxTime: 9.5,
                                     compressed: true, user: "u", password: "p:w", netrcFile: "/n", ipVersion: .v4,
                                     resolve: ["h:80:127.0.0.1"])
        new.network = network
        let job = try store.insert(new, maxRetries: 1, resume: nil)
        #expect(job.network == network, "the store keeps the real values")
        #expect(try store.job(job.id)?.network == network)
        try store.saveResume(job.id, ResumeState(partialPath: job.partialPath!, bytesDurable: 5,
                                                 validators: Validators(etag: "\"e\""), decoded: true))
        #expect(try store.resumeState(job.id)?.decoded == true)
        let plain = try store.insert(NewJob(kind: .download, url: "http://h/g", path: directory.file("g")), maxRetries: 1, resume: nil)
        #expect(plain.network == NetworkOptions())
        #expect(try store.quarantineInvalidJobs().isEmpty)
    }

    @Test func aStoredRowWithOptionsOutsideTheRulesIsQuarantined() throws {
        let path = directory.database("t.db")
        let store = try JobStore(path: path)
        let job = try store.insert(NewJob(kind: .download, url: "http://h/f", path: directory.file("f")), maxRetries: 1, resume: nil)
        try store.connection.run(#"UPDATE jobs SET network = '{"maxTime": -1}' WHERE id = ?"#, job.id.rawValue)
        let quarantined = try store.quarantineInvalidJobs()
        #expect(quarantined.map(\.0) == [job.id])
        #expect(quarantined.first?.1.message.contains("network.maxTime must be seconds") == true, "\(quarantined)")
    }

    // MARK: Decisions

    @Test func decodedBytesAreNeverContinuedByARange() {
        let current = FileIdentity(device: 1, inode: 2, size: 100, modifiedNanoseconds: 3)
        var state = ResumeState(partialPath: "/d/.f.transferd-part", bytesDurable: 100,
                                validators: Validators(lastModified: "Mon, 01 Jan 2024 00:00:00 GMT"), file: current)
        #expect(state.reasonToStartOver(current: current) == nil)
        state.decoded = true
        #expect(state.reasonToStartOver(current: current) == .decoded)
        #expect(StartOverReason.decoded.rawValue == "content_decoded")
        let exported = ResumeData(job: Job(Job.Fields(id: JobID(rawValue: 1), kind: .download, state: .paused, url: "http://h/f", path: "/d/f",
                                           headers: [], overwrite: false, priority: .normal, maxRetries: 7, bytesDone: 100,
                                           attempts: 1, createdAt: Timestamp(rawValue: 0), updatedAt: Timestamp(rawValue: 0))),
                                  state: state)
        #expect(exported.bytesReceived == 0, "resume data offers no bytes to continue by a range")
    }

    @Test func aResponseIsEncodedWhenItNamesACodingOtherThanIdentity() {
        func head(_ encoding: String?) -> ResponseHead {
            ResponseHead(status: 200, fields: encoding.map { ["content-encoding": $0] } ?? [:])
        }
        #expect(head("gzip").isContentEncoded)
        #expect(head("identity, br").isContentEncoded)
        #expect(head(" ZSTD ").isContentEncoded)
        #expect(!head("identity").isContentEncoded)
        #expect(!head(nil).isContentEncoded)
        #expect(!head("").isContentEncoded)
    }

    @Test func theFirstChallengeIsLibcurlsToAnswerWhenThereAreCredentials() {
        let challenge = ResponseHead(status: 401, fields: ["www-authenticate": "Digest realm=\"r\""])
        let resume = ResumeState(partialPath: "/p")
        #expect(DownloadDecision.decide(challenge, offset: 0, resume: resume, authenticating: true) == .ignore)
        #expect(DownloadDecision.decide(challenge, offset: 0, resume: resume) == .fail(.httpStatus(401)))
        #expect(DownloadDecision.decide(ResponseHead(status: 401), offset: 0, resume: resume, authenticating: true)
                == .fail(.httpStatus(401)), "a 401 that asks for nothing is the answer")
    }

    @Test func aMaxTimeThatRunsOutIsTypedAndNotRetried() {
        let error = TransferError.timedOut(seconds: 1.5)
        #expect(error.code == "timed_out")
        #expect(error.message == "the attempt took longer than --max-time 1.5 s")
        #expect(RetryPolicy().refusal(for: error, method: "GET", requestSent: false, retryUnsafe: false) == .maxTime)
        #expect(RetryRefusal.maxTime.rawValue == "max_time")
        let deadline = AttemptDeadline(maxTime: 2, now: 100)!
        #expect(deadline.remainingMilliseconds(now: 100.5) == 1500)
        #expect(deadline.remainingMilliseconds(now: 103) == 1, "a step after the deadline ends at once")
        #expect(deadline.expired(CurlCode(rawValue: 28), now: 102))
        #expect(!deadline.expired(CurlCode(rawValue: 28), now: 101.9), "a connect or stall timeout before it is not the max time's")
        #expect(!deadline.expired(CurlCode(rawValue: 7), now: 103))
        #expect(AttemptDeadline(maxTime: nil) == nil)
    }

    @Test func offlineJobsWaitPerHostAndRoute() {
        #expect(NetworkOptions().routeKey == "")
        #expect(NetworkOptions(connectTimeout: 3, compressed: true, user: "u", password: "p").routeKey == "",
                "what does not change the way there does not part jobs")
        let proxied = NetworkOptions(proxy: "http://u:pw@p:3128", ipVersion: .v4)
        #expect(proxied.routeKey == " (proxy=http://u:<redacted>@p:3128, ipv4)", "logged, so redacted")
        #expect(HostProbe(jobURL: "http://h:8080/f", route: proxied.route)?.key == "http://h:8080 (proxy=http://u:<redacted>@p:3128, ipv4)")
        #expect(proxied.route.password == nil && proxied.route.user == nil)
    }

    // MARK: Manifests

    @Test func aManifestLineTakesTheOptionsWithCurlsSyntax() throws {
        let line = #"{"download":{"url":"http://h/a","output":"/tmp/a","compressed":true,"proxy":"p:3128","noProxy":"localhost","#
            + #""connectTimeout":2.5,"maxTime":"60","user":"u:p:w","netrcFile":"/n","ipVersion":6,"resolve":["h:80:::1"]}}"#
        let entry = try #require(try Manifest.parse(Array(line.utf8)).first)
        #expect(entry.job.network == NetworkOptions(proxy: "http://p:3128", noProxy: "localhost", connectTimeout: 2.5, maxTime: 60,
                                                    compressed: true, user: "u", password: "p:w", netrcFile: "/n",
                                                    ipVersion: .v6, resolve: ["h:80:[::1]"]))
        let upload = #"{"upload":{"url":"http://h/u","file":"/tmp/x","user":"u:p"}}"#
        #expect(try Manifest.parse(Array(upload.utf8)).first?.job.network == NetworkOptions(user: "u", password: "p"))
    }

    @Test func aManifestLineWithABadOptionNamesItsField() {
        for (fields, message) in [(#""maxTime":0"#, "maxTime must be seconds"), (#""user":"alice""#, "user takes USER:PASSWORD"),
                                  (#""resolve":["h:80"]"#, "resolve takes HOST:PORT"), (#""ipVersion":5"#, "ipVersion"),
                                  (#""proxy":"ftp://p""#, "proxy 'ftp://p'")] {
            let line = #"{"download":{"url":"http://h/a","output":"/tmp/a","# + fields + "}}"
            do {
                _ = try Manifest.parse(Array(line.utf8))
                Issue.record("\(fields) was taken")
            } catch {
                #expect(error.line == 1)
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
        let upload = #"{"upload":{"url":"http://h/u","file":"/tmp/x","compressed":true}}"#
        #expect(throws: Manifest.LineError.self) { try Manifest.parse(Array(upload.utf8)) }
    }
}
