import Foundation
import Testing
@testable import TransferEngine

@Suite struct RedactionTests {
    @Test func secretHeadersNeverPrint() {
        let redacted = Redaction.headers(["Authorization: Bearer s3cret", "cookie: a=b", "X-Amz-Security-Token: t0k",
                                          "X-API-Key: k", "X-Trace: 1"])
        #expect(redacted == ["Authorization: <redacted>", "cookie: <redacted>", "X-Amz-Security-Token: <redacted>",
                             "X-API-Key: <redacted>", "X-Trace: 1"])
        #expect(Redaction.withoutSecrets(["Proxy-Authorization: Basic x", "Accept: */*"]) == ["Accept: */*"])
    }

    @Test(arguments: ["X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "X-Goog-Signature",
                      "X-Goog-Credential", "sig", "signature", "token", "access_token", "api_key", "apikey", "key",
                      "password", "SIG", "Access_Token"])
    func everySecretQueryParameterIsRedactedWithoutCase(name: String) {
        let url = "https://h/p?a=1&\(name)=s3cret&b=2"
        #expect(Redaction.url(url) == "https://h/p?a=1&\(name)=<redacted>&b=2")
    }

    @Test func presignedURLsKeepEverythingButTheSecrets() {
        let s3 = "https://bucket.s3.amazonaws.com/k.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20260101"
            + "&X-Amz-Date=20260101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=abcdef0123"
        #expect(Redaction.url(s3) == "https://bucket.s3.amazonaws.com/k.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=<redacted>&X-Amz-Date=20260101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
            + "&X-Amz-Signature=<redacted>")
        #expect(Redaction.url("https://u:pw@h/p?token=t&x=1#access_token=a&s=1")
                == "https://u:<redacted>@h/p?token=<redacted>&x=1#access_token=<redacted>&s=1")
        #expect(Redaction.url("https://h/p?X%2DAmz%2DSignature=s") == "https://h/p?X%2DAmz%2DSignature=<redacted>",
                "names are compared percent-decoded")
        #expect(Redaction.url("example.com/x?token=t") == "example.com/x?token=<redacted>", "no scheme, still redacted")
    }

    @Test func aPasswordOrAFragmentAloneIsStillRedacted() {
        #expect(Redaction.url("https://u:pw@h/p") == "https://u:<redacted>@h/p")
        #expect(Redaction.url("https://h/p#access_token=a") == "https://h/p#access_token=<redacted>")
        #expect(Redaction.url("https://u@h/p") == "https://u@h/p", "a user without a password keeps its name")
    }

    @Test func aRedactedValueIsFoundAnywhereInTheText() {
        #expect(Redaction.isRedacted("https://u:<redacted>@h/p"))
        #expect(Redaction.isRedacted("<redacted>"))
        #expect(Redaction.isRedacted("https://h/p?token=<redacted>"))
        #expect(!Redaction.isRedacted("https://h/p?a=<redacte"))
        #expect(!Redaction.isRedacted("https://h/<<redacte>"))
        #expect(Redaction.isRedacted("https://h/<<redacted>"))
        #expect(!Redaction.isRedacted(""))
    }

    @Test func namesHoldingASecretWordAreSecrets() {
        for name in ["Private-Token", "X-Vault-Token", "X-Gitlab-Private-Token", "X-Client-Secret", "db_password",
                     "X-Session-Id", "accesstoken", "X-Csrftoken", "client.secret", "X-Auth-Token", "Authorization"] {
            #expect(Redaction.isSecret(name: name), "\(name)")
        }
        for name in ["X-Team", "Accept", "User-Agent", "X-Request-Id", "tokens", "keys", "author", "Content-Disposition"] {
            #expect(!Redaction.isSecret(name: name), "\(name)")
        }
        #expect(Redaction.headers(["X-Vault-Token: hvs.abc", "X-Team: a"]) == ["X-Vault-Token: <redacted>", "X-Team: a"])
        let guarded = RedirectGuard(jobURL: "http://a/", tls: TLSOptions(), secretNames: ["x-team"])
        #expect(guarded.headers(["X-Team: t", "Accept: */*"], to: "http://b/") == ["Accept: */*"])
        #expect(!guarded.libcurlMayFollow(["X-Team: t"]) && RedirectGuard(jobURL: "http://a/", tls: TLSOptions()).libcurlMayFollow(["X-Team: t"]))
    }

    @Test func whatIsNotASecretIsLeftAlone() {
        for url in ["https://h/p", "https://h/p?", "https://h/p?keys=1&tokens=2&token", "https://h/token=1/p",
                    "https://h/p?a=b=c&&"] {
            #expect(Redaction.url(url) == url)
        }
    }

    @Test func secretFormFieldsAreRedactedFilesAreNot() {
        let file = FormPart.file(name: "key", source: SourceFile(path: "/a", size: 1, modified: 0), filename: "a",
                                 contentType: "text/plain")
        let form: [FormPart] = [.field(name: "policy", value: "eyJ"), .field(name: "X-Amz-Credential", value: "AKIA"),
                                .field(name: "x-amz-security-token", value: "t"), .field(name: "x-amz-signature", value: "s"),
                                .field(name: "Content-Type", value: "image/png"), file]
        #expect(Redaction.form(form) == [.field(name: "policy", value: "<redacted>"),
                                         .field(name: "X-Amz-Credential", value: "<redacted>"),
                                         .field(name: "x-amz-security-token", value: "<redacted>"),
                                         .field(name: "x-amz-signature", value: "<redacted>"),
                                         .field(name: "Content-Type", value: "image/png"), file])
    }

    @Test func theJobJSONIsRedactedButTheJobIsNot() throws {
        var job = Job(Job.Fields(id: JobID(rawValue: 1), kind: .upload, state: .queued, url: "https://h/u?sig=S1", path: nil,
                      headers: ["Cookie: c=S2"], overwrite: false, priority: .normal, maxRetries: 1, bytesDone: 0,
                      attempts: 0, createdAt: Timestamp(rawValue: 0), updatedAt: Timestamp(rawValue: 0)))
        job.upload = UploadSpec(boundary: "b", form: [.field(name: "password", value: "S3")])
        let json = String(decoding: try JSONEncoder().encode(job), as: UTF8.self)
        for secret in ["S1", "S2", "S3"] { #expect(!json.contains(secret)) }
        #expect(job.url == "https://h/u?sig=S1", "the job itself keeps the value it sends")
        let spec = String(decoding: try JSONEncoder().encode(job.upload), as: UTF8.self)
        #expect(spec.contains("S3"), "the store's copy of the form is not redacted")
    }

    @Test func aRedactedURLIsRefusedWhenQueued() {
        #expect(throws: JobRefusal.self) { try JobValidation.validateURL("https://h/p?sig=<redacted>") }
        #expect(throws: JobRefusal.self) { try JobValidation.validateURL("https://u:<redacted>@h/p") }
    }
}
