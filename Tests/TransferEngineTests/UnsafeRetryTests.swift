import Foundation
import Testing
@testable import TransferEngine

/// The retry rule for requests that are not idempotent, and the Idempotency-Key they carry.
@Suite struct UnsafeRetryTests {
    let policy = RetryPolicy()
    let directory = TemporaryDirectory()

    private func refusal(_ error: TransferError, _ method: String = "POST", sent: Bool = true,
                         retryUnsafe: Bool = false) -> RetryRefusal? {
        policy.refusal(for: error, method: method, requestSent: sent, retryUnsafe: retryUnsafe)
    }

    @Test func aPostIsRetriedOnlyWhenTheServerCannotHaveActedOnIt() {
        #expect(refusal(.unreachable("no route")) == nil, "no connection")
        #expect(refusal(.network("reset"), sent: false) == nil, "the body was cut off before its last byte")
        #expect(refusal(.stalled(seconds: 60), sent: false) == nil)
        for status in [408, 429, 503] { #expect(refusal(.httpStatus(status)) == nil, "\(status)") }
        #expect(refusal(.network("no response")) == .unsafeMethod, "a lost answer after the whole request")
        #expect(refusal(.stalled(seconds: 60)) == .unsafeMethod, "waiting for an answer that never came")
        for status in [500, 502, 504] { #expect(refusal(.httpStatus(status)) == .unsafeMethod, "\(status)") }
        for status in [500, 502, 504] {
            #expect(refusal(.httpStatus(status), sent: false) == .unsafeMethod, "\(status) is an answer: it acted")
        }
        #expect(refusal(.httpStatus(500), "patch") == .unsafeMethod, "PATCH too, in any case")
    }

    @Test func retryUnsafeAllowsWhatIsRetryable() {
        for error in [TransferError.network("no response"), .httpStatus(500), .httpStatus(502), .httpStatus(504),
                      .stalled(seconds: 1)] {
            #expect(refusal(error, retryUnsafe: true) == nil)
        }
        #expect(refusal(.httpStatus(404), retryUnsafe: true) == .permanent, "never what is permanent")
    }

    @Test func idempotentMethodsKeepTheirPolicy() {
        for method in ["GET", "HEAD", "PUT", "DELETE"] {
            #expect(refusal(.httpStatus(500), method) == nil)
            #expect(refusal(.network("no response"), method) == nil)
            #expect(refusal(.httpStatus(404), method) == .permanent)
            #expect(refusal(.request("bad URL"), method) == .permanent)
        }
    }

    @Test func onlyAPostWithoutItsOwnHeaderGetsAKey() throws {
        let key = try #require(IdempotencyKey.make(method: "POST", headers: ["X-A: 1"]))
        #expect(UUID(uuidString: key) != nil)
        #expect(IdempotencyKey.make(method: "POST", headers: []) != key, "one key per job")
        #expect(IdempotencyKey.make(method: "patch", headers: []) != nil)
        #expect(IdempotencyKey.make(method: "PUT", headers: []) == nil)
        #expect(IdempotencyKey.make(method: nil, headers: []) == nil)
        #expect(IdempotencyKey.make(method: "POST", headers: ["idempotency-key: mine"]) == nil)
        #expect(IdempotencyKey.header("k1") == #"Idempotency-Key: "k1""#)
    }

    @Test func theKeyIsStoredWithTheJobAndSentWithEveryAttempt() throws {
        let path = directory.database("t.db")
        let file = directory.file("body.bin")
        try Data("body".utf8).write(to: URL(fileURLWithPath: file))
        let store = try JobStore(path: path)
        let post = try store.queue(NewJob(kind: .upload, url: "http://h/u", path: file, method: "POST", retryUnsafe: true),
                                   defaultRetries: 3)
        let key = try #require(post.idempotencyKey)
        #expect(post.retryUnsafe)
        #expect(post.requestHeaders == [#"Idempotency-Key: "\#(key)""#])
        let put = try store.queue(NewJob(kind: .upload, url: "http://h/u", path: file), defaultRetries: 3)
        #expect(put.idempotencyKey == nil && !put.retryUnsafe)
        let own = try store.queue(NewJob(kind: .upload, url: "http://h/u", path: file, headers: ["Idempotency-Key: mine"],
                                         method: "POST"), defaultRetries: 3)
        #expect(own.idempotencyKey == nil && own.requestHeaders == ["Idempotency-Key: mine"])
        let reopened = try JobStore(path: path)
        #expect(try reopened.job(post.id)?.idempotencyKey == key, "the same key after a restart")
    }

    @Test func whyAnAttemptWasNotRetriedIsRecorded() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(NewJob(kind: .download, url: "http://h/a", path: directory.file("a")), maxRetries: 0,
                                   resume: nil)
        try store.beginAttempt(job.id, number: 1, rangeStart: 0)
        try store.finishAttempt(job.id, number: 1, httpStatus: 500, error: TransferError.httpStatus(500).record, bytes: 0)
        try store.recordRefusal(job.id, number: 1, .unsafeMethod)
        #expect(try store.attempts(job.id).first?.notRetried == .unsafeMethod)
        let json = String(decoding: try JSONEncoder().encode(try store.attempts(job.id)), as: UTF8.self)
        #expect(json.contains(#""notRetried":"unsafe_method""#))
    }
}
