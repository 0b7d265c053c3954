import Testing
@testable import TransferEngine

@Suite struct S3FailureTests {
    static func failure(_ status: Int, _ code: String?, _ message: String? = nil) -> TransferError {
        S3Failure.transferError(status: status, error: code.map { S3ErrorBody(code: S3ErrorCode($0), message: message) })
    }

    @Test(arguments: ["SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied", "ExpiredToken", "InvalidToken",
                      "AuthorizationHeaderMalformed", "RequestTimeTooSkewed"])
    func refusedCredentialsAreAuthAndNotRetried(code: String) {
        let error = Self.failure(code == "AuthorizationHeaderMalformed" ? 400 : 403, code)
        #expect(error.code == "auth")
        #expect(!RetryPolicy().isRetryable(error))
        #expect(RetryPolicy().refusal(for: error, method: "PUT", requestSent: true, retryUnsafe: false) == .permanent)
        #expect(error.message.contains(code))
    }

    @Test func messagesSayWhatToCheck() {
        #expect(Self.failure(403, "SignatureDoesNotMatch", "The request signature we calculated does not match.").message
                == "S3 answered HTTP 403 SignatureDoesNotMatch: the request signature does not match: check the secret access key "
                + "that goes with the access key id (if it is right, the server computes this request's signature differently: "
                + "some S3-compatible servers do for keys with characters outside ASCII) "
                + "(\"The request signature we calculated does not match.\")")
        #expect(Self.failure(400, "ExpiredToken").message.contains("AWS_SESSION_TOKEN"))
        #expect(Self.failure(403, nil).message == "S3 answered HTTP 403: the credentials were refused: check the access key, "
                + "secret, session token and region")
        #expect(Self.failure(500, "InternalError", "line one\nline\u{1B}two").message.hasSuffix("(\"line one line\u{1B}two\")"))
        let long = Self.failure(503, "SlowDown", String(repeating: "x", count: 500)).message
        #expect(long.count < 400)
    }

    @Test func aGoneUploadIsADistinctKindTheEngineRecognises() {
        let error = Self.failure(404, "NoSuchUpload")
        guard case .s3(let failure) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(failure.kind == .uploadGone)
        #expect(failure.code == .noSuchUpload)
        #expect(error.code == "http_status")
        #expect(error.status == 404)
        #expect(RetryPolicy().isRetryable(error), "the next attempt starts a new upload")
    }

    @Test(arguments: [(404, "NoSuchBucket"), (404, "NoSuchKey"), (400, "InvalidBucketName"), (400, "EntityTooLarge"),
                      (400, "InvalidPart"), (301, "PermanentRedirect"), (400, "Whatever")])
    func permanentRefusalsAreNotRetried(status: Int, code: String) {
        let error = Self.failure(status, code)
        #expect(error.code == "http_status")
        #expect(error.status == status)
        #expect(!RetryPolicy().isRetryable(error))
    }

    @Test(arguments: [(503, "SlowDown"), (500, "InternalError"), (503, "ServiceUnavailable"), (400, "RequestTimeout"),
                      (409, "OperationAborted"), (502, nil), (504, nil), (429, nil), (408, nil), (500, "SomethingNew")])
    func busyOrFailingServersAreRetried(status: Int, code: String?) {
        let error = Self.failure(status, code)
        #expect(RetryPolicy().isRetryable(error))
        #expect(error.code == "http_status")
    }

    @Test func statusAloneDecidesWithoutABody() {
        #expect(Self.failure(401, nil).code == "auth")
        #expect(!RetryPolicy().isRetryable(Self.failure(404, nil)))
        #expect(RetryPolicy().isRetryable(Self.failure(503, nil)))
    }

    @Test func aSlowDownPOSTIsRetriedButAnInternalErrorPOSTMayHaveActed() {
        let policy = RetryPolicy()
        #expect(policy.refusal(for: Self.failure(503, "SlowDown"), method: "POST", requestSent: true, retryUnsafe: false) == nil)
        #expect(policy.refusal(for: Self.failure(500, "InternalError"), method: "POST", requestSent: true, retryUnsafe: false)
                == .unsafeMethod)
    }
}
