import Foundation
import XCTest

/// Secret headers follow a redirect only to the origin of the job's URL: two fault servers on
/// two ports of 127.0.0.1 (another port is another origin), the first redirecting to the
/// second. Without `--location-trusted` the second never sees `Authorization`,
/// `Proxy-Authorization`, `Cookie`, `X-Api-Key` (libcurl alone drops only the first and the
/// third); with it, it sees them all; a redirect within the first server keeps them.
final class RedirectSecretTests: IntegrationTestCase {
    private var home: FaultServer!
    private var elsewhere: FaultServer!

    private static let secrets = ["Authorization: Bearer s3cret-token", "Proxy-Authorization: Basic cHJveHk6cHc=",
                                  "Cookie: session=s3cret-cookie", "X-Api-Key: s3cret-key", "X-Auth-Token: s3cret-auth"]
    private static let plain = "X-Request-Note: visible"
    private static let size = 200 * KiB

    override func setUpWithError() throws {
        try super.setUpWithError()
        home = try FaultServer(outputURL: workDir.appendingPathComponent("home.out"), scratch: workDir.appendingPathComponent("home-curl"))
        elsewhere = try FaultServer(outputURL: workDir.appendingPathComponent("elsewhere.out"),
                                    scratch: workDir.appendingPathComponent("elsewhere-curl"))
        try home.start()
        try elsewhere.start()
    }

    override func tearDownWithError() throws {
        if let run = testRun, run.totalFailureCount > 0 {
            print("---- home:\n\(home?.describeLog() ?? "")\n---- elsewhere:\n\(elsewhere?.describeLog() ?? "")\n----")
        }
        home?.stop()
        elsewhere?.stop()
        try super.tearDownWithError()
    }

    /// Downloads `url` (which ends at `/files/f.bin`) with the secret and plain headers to
    /// `output`; the job completes with the entity.
    @discardableResult
    private func download(_ url: String, to output: String, _ options: [String] = []) throws -> Int {
        let headers = (Self.secrets + [Self.plain]).flatMap { ["-H", $0] }
        let dest = destination(output)
        let id = try cli.download(url, to: dest, headers + options)
        try waitCompleted(id)
        XCTAssertEqual(try cli.sha256(of: dest), try elsewhere.sha256("f.bin", size: Self.size), "the entity arrived")
        return id
    }

    private func secretNames(in headers: [String: String]) -> [String] {
        Self.secrets.map { String($0.prefix { $0 != ":" }).lowercased() }.filter { headers[$0] != nil }.sorted()
    }

    private var allSecretNames: [String] { Self.secrets.map { String($0.prefix { $0 != ":" }).lowercased() }.sorted() }

    func testSecretsDoNotFollowARedirectToAnotherPort() throws {
        let target = elsewhere.url("f.bin", size: Self.size)
        try download(home.redirectURL(to: target), to: "f.bin")

        let asked = try XCTUnwrap(home.requestHeaders("/redirect").first, home.describeLog())
        XCTAssertEqual(secretNames(in: asked), allSecretNames, "the job's own origin gets every secret")
        let redirected = elsewhere.requestHeaders("/files/f.bin")
        XCTAssertEqual(redirected.count, 1, elsewhere.describeLog())
        for headers in redirected {
            XCTAssertEqual(secretNames(in: headers), [], "no secret reaches another origin: \(headers)")
            XCTAssertEqual(headers["x-request-note"], "visible", "the other headers do: \(headers)")
        }
        // A redirect on through the other origin and back home does not bring them back.
        let back = home.url("f.bin", size: Self.size)
        try download(home.redirectURL(to: elsewhere.redirectURL(to: back, status: 307)), to: "f2.bin")
        let backHome = home.requestHeaders("/files/f.bin")
        XCTAssertEqual(backHome.count, 1, home.describeLog())
        XCTAssertEqual(backHome.first.map(secretNames) ?? ["?"], [], "not even back at the origin after leaving it")
    }

    func testARedirectWithinTheOriginKeepsTheSecrets() throws {
        let target = home.url("f.bin", size: Self.size)
        try download(home.redirectURL(to: home.redirectURL(to: target, status: 301)), to: "f.bin")
        XCTAssertEqual(home.requestHeaders("/redirect").map(secretNames), [allSecretNames, allSecretNames], home.describeLog())
        XCTAssertEqual(home.requestHeaders("/files/f.bin").map(secretNames), [allSecretNames], home.describeLog())
    }

    func testLocationTrustedSendsTheSecretsWhereverTheRedirectGoes() throws {
        let target = elsewhere.url("f.bin", size: Self.size)
        let id = try download(home.redirectURL(to: target), to: "f.bin", ["--location-trusted"])
        XCTAssertEqual(elsewhere.requestHeaders("/files/f.bin").map(secretNames), [allSecretNames], elsewhere.describeLog())

        let job = try cli.job(id)
        XCTAssertEqual((job["tls"] as? [String: Any])?["locationTrusted"] as? Bool, true, job.jsonText)
        let shown = cli.run(["show", String(id)])
        XCTAssertTrue(shown.stdout.contains("redirects: secret headers go to any host (--location-trusted)"), shown.stdout)
        let curl = cli.run(["show", String(id), "--curl"])
        XCTAssertTrue(curl.stdout.hasPrefix("curl --fail --location-trusted "), curl.stdout)
        for secret in ["s3cret-token", "s3cret-key", "s3cret-auth", "cHJveHk6cHc="] {
            for output in [shown.stdout, curl.stdout, job.jsonText] {
                XCTAssertFalse(output.contains(secret), "\(secret) is redacted: \(output)")
            }
        }
    }

    func testAManifestLineCanTrustLocationsToo() throws {
        let manifest = workDir.appendingPathComponent("m.jsonl")
        let line: [String: Any] = ["download": ["url": home.redirectURL(to: elsewhere.url("f.bin", size: Self.size)),
                                                "output": destination("f.bin").path, "headers": Self.secrets,
                                                "locationTrusted": true]]
        try JSONSerialization.data(withJSONObject: line).write(to: manifest)
        let submitted = try XCTUnwrap(try cli.json(["batch", "submit", manifest.path]) as? [String: Any])
        let batch = try XCTUnwrap(jsonInt(submitted["batch"]), "\(submitted)")
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        XCTAssertEqual(elsewhere.requestHeaders("/files/f.bin").map(secretNames), [allSecretNames], elsewhere.describeLog())
    }

    /// Only names on the secret list were stripped at another origin: a header command printing
    /// `Private-Token:` or `X-Vault-Token:` had them sent to the redirect's host (issue 60,
    /// item 4). Every line a header command prints is a secret; the same names given with `-H`
    /// are secrets too, in `show` and `show --curl`.
    func testWhatAHeaderCommandPrintsNeverFollowsARedirectToAnotherOrigin() throws {
        let target = elsewhere.url("f.bin", size: Self.size)
        // (A vault's answer: the secrets are not in the command's own text.)
        let vault = workDir.appendingPathComponent("vault.txt")
        try Data("Private-Token: cmd-tok-1\nX-Vault-Token: cmd-vault-2\nX-Team: cmd-team-3\n".utf8).write(to: vault)
        let command = "cat '\(vault.path)'"
        let dest = destination("cmd.bin")
        let id = try cli.download(home.redirectURL(to: target), to: dest,
                                  ["--header-command", command, "-H", "X-Gitlab-Private-Token: given-tok-4"])
        try waitCompleted(id)
        let asked = try XCTUnwrap(home.requestHeaders("/redirect").first, home.describeLog())
        XCTAssertEqual(asked["private-token"], "cmd-tok-1", "the origin gets what the command printed")
        XCTAssertEqual(asked["x-team"], "cmd-team-3")
        let redirected = try XCTUnwrap(elsewhere.requestHeaders("/files/f.bin").first, elsewhere.describeLog())
        for name in ["private-token", "x-vault-token", "x-team", "x-gitlab-private-token"] {
            XCTAssertNil(redirected[name], "\(name) went to another origin: \(redirected)")
        }
        for output in [cli.run(["show", String(id)]).stdout, cli.run(["show", String(id), "--curl"]).stdout,
                       cli.run(["show", String(id), "--json"]).stdout] {
            for secret in ["cmd-tok-1", "cmd-vault-2", "cmd-team-3", "given-tok-4"] {
                XCTAssertFalse(output.contains(secret), "\(secret) shown: \(output)")
            }
        }
    }
}
