import Testing
@testable import TransferEngine

@Suite struct RedirectGuardTests {
    let headers = ["Authorization: Bearer t", "Proxy-Authorization: Basic p", "Cookie: c=1", "X-Api-Key: k",
                   "api-key: k2", "X-Auth-Token: a", "Accept: */*"]
    let job = RedirectGuard(jobURL: "https://files.example.com/a.iso", tls: TLSOptions())

    @Test func everySecretHeaderIsOneOfTheRedactionRules() {
        #expect(Redaction.withoutSecrets(headers) == ["Accept: */*"])
        #expect(Redaction.headers(["x-api-key: k"]) == ["x-api-key: <redacted>"])
    }

    @Test func secretsGoOnlyToTheJobsOrigin() {
        #expect(job.headers(headers, to: "https://files.example.com/b.iso") == headers)
        #expect(job.headers(headers, to: "https://FILES.example.com:443/c") == headers, "same host, default port")
        for elsewhere in ["https://cdn.example.com/a.iso", "https://files.example.com:8443/a.iso",
                          "http://files.example.com/a.iso", "https://evil.test/", "not a url"] {
            #expect(job.headers(headers, to: elsewhere) == ["Accept: */*"], "\(elsewhere)")
        }
        let plain = RedirectGuard(jobURL: "http://127.0.0.1:8080/f", tls: TLSOptions())
        #expect(plain.headers(headers, to: "http://127.0.0.1:8081/f") == ["Accept: */*"], "another port is another origin")
        #expect(plain.headers(headers, to: "http://127.0.0.1:8080/g") == headers)
    }

    @Test func locationTrustedSendsThemAnywhere() {
        let trusted = RedirectGuard(jobURL: "https://files.example.com/a.iso", tls: TLSOptions(locationTrusted: true))
        #expect(trusted.headers(headers, to: "https://cdn.example.com/a.iso") == headers)
        #expect(trusted.libcurlMayFollow(headers))
    }

    @Test func libcurlFollowsOnlyRequestsWithoutSecrets() {
        #expect(!job.libcurlMayFollow(headers))
        #expect(!job.libcurlMayFollow(["x-api-key: k"]))
        #expect(job.libcurlMayFollow(["Accept: */*", "X-Plain: 1"]))
    }

    @Test func httpsMayNotStepDownToHttpUnlessAllowed() {
        #expect(job.refusal(of: "http://files.example.com/a.iso") == .insecureRedirect(to: "http://files.example.com/a.iso"))
        #expect(job.refusal(of: "https://cdn.example.com/a.iso") == nil)
        let allowed = RedirectGuard(jobURL: "https://files.example.com/a.iso", tls: TLSOptions(allowInsecureRedirect: true))
        #expect(allowed.refusal(of: "http://files.example.com/a.iso") == nil)
        #expect(RedirectGuard(jobURL: "http://h/a", tls: TLSOptions()).refusal(of: "http://g/b") == nil)
    }

    @Test func aLocationIsResolvedAsLibcurlResolvesIt() {
        #expect(CurlURL.resolve("/b/c?d=1", against: "http://h:8080/a/x") == "http://h:8080/b/c?d=1")
        #expect(CurlURL.resolve("y z", against: "http://h/a/x") == "http://h/a/y%20z")
        #expect(CurlURL.resolve("//other:81/p", against: "https://h/a") == "https://other:81/p")
        #expect(CurlURL.resolve("HTTP://Other/p", against: "https://h/a") == "http://Other/p")
    }
}
