import Foundation
import Testing
@testable import TransferEngine

/// `JSONStreamEncoder` writes what `JSONEncoder` writes, as any JSON reader sees it.
@Suite struct JSONStreamEncoderTests {
    /// Both encodings, parsed back into Foundation objects.
    func parsedBoth(_ value: some Encodable) throws -> (stream: NSObject, foundation: NSObject) {
        let stream = try JSONStreamEncoder().encode(value)
        let foundation = try JSONEncoder().encode(value)
        let parse = { (data: Data) throws -> NSObject in
            try #require(JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? NSObject)
        }
        return (try parse(Data(stream)), try parse(foundation))
    }

    func richJob() -> Job {
        var job = makeJob(7, state: .failed, kind: .upload, batch: 3, attempts: 2, bytesDone: 1 << 40, method: "POST")
        job.stateReason = "it said \"no\"\n\tand \\ left; ünïcødé ✓ \u{1}"
        job.headers = ["X-Token: abc", "Accept: */*"]
        job.error = JobError(code: "http_status", message: "HTTP 404")
        job.nextAttemptAt = Timestamp(milliseconds: 1_700_000_000_123)
        let source = SourceFile(path: "/tmp/a b.txt", size: 3, modified: 0)
        job.upload = UploadSpec(boundary: "b", form: [.field(name: "title", value: "it's"),
                                                      .file(name: "doc", source: source, filename: "q.txt", contentType: "text/plain")])
        job.waitReason = .offline
        return job
    }

    @Test func aResponseOfJobsReadsTheSame() throws {
        let response = ControlResponse(jobs: [richJob(), makeJob(1), makeJob(2, state: .completed)])
        let (stream, foundation) = try parsedBoth(response)
        #expect(stream == foundation)
        let decoded = try JSONDecoder().decode(ControlResponse.self, from: Data(try JSONStreamEncoder().encode(response)))
        #expect(decoded == (try JSONDecoder().decode(ControlResponse.self, from: try JSONEncoder().encode(response))))
    }

    @Test func eventsErrorsAndEmptyValuesReadTheSame() throws {
        var event = TransferEvent(.state, job: JobID(rawValue: 4), time: Timestamp(milliseconds: 5))
        event.from = .running
        event.state = .waiting
        event.reason = "retry in 4 s"
        let values: [ControlResponse] = [ControlResponse(events: [event], event: event),
                                         ControlResponse(ok: false, error: ControlError(.badRequest, "bad \"request\"")),
                                         ControlResponse(jobs: [])]
        for value in values {
            let (stream, foundation) = try parsedBoth(value)
            #expect(stream == foundation)
        }
        struct Empty: Encodable {}
        #expect(try JSONStreamEncoder().encode(Empty()) == Array("{}".utf8))
        #expect(try JSONStreamEncoder().encode([Int?.none, 3]) == Array("[null,3]".utf8))
        #expect(try JSONStreamEncoder().encode([2.0, 0.5, -1e-7]) == Array("[2,0.5,-1e-07]".utf8))
    }

    @Test func prettyOutputIsIndentedInKeyOrderAndReadsTheSame() throws {
        struct Inner: Encodable { var b = [1, 2]; var a: [Int] = []; var c: [String: Int]? = nil }  // nil: left out
        struct Outer: Encodable { var z = "last first"; var inner = Inner(); var empty = [String: Int]() }
        let text = String(decoding: try JSONStreamEncoder(pretty: true).encode(Outer()), as: UTF8.self)
        #expect(text == """
            {
              "z": "last first",
              "inner": {
                "b": [
                  1,
                  2
                ],
                "a": []
              },
              "empty": {}
            }
            """)
        let response = ControlResponse(jobs: [richJob(), makeJob(1)])
        let pretty = try JSONSerialization.jsonObject(with: Data(try JSONStreamEncoder(pretty: true).encode(response))) as? NSObject
        #expect(pretty == (try parsedBoth(response)).foundation)
        let job = String(decoding: try JSONStreamEncoder(pretty: true).encode(makeJob(1)), as: UTF8.self)
        #expect(job.hasPrefix("{\n  \"id\": 1,\n  \"kind\": \"download\","), "a job's keys in the documented order: \(job)")
    }

    @Test func aSecondKeyedContainerOfOneEncoderAddsToTheSameObject() throws {
        struct Wrapper: Encodable {
            var job: Job
            enum Extra: String, CodingKey { case log, more }
            func encode(to encoder: Encoder) throws {
                try job.encode(to: encoder)
                var extra = encoder.container(keyedBy: Extra.self)
                try extra.encode(["a", "b"], forKey: .log)
                try extra.encode(1, forKey: .more)
            }
        }
        let value = [Wrapper(job: richJob()), Wrapper(job: makeJob(2))]
        let (stream, foundation) = try parsedBoth(value)
        #expect(stream == foundation)
        let pretty = try JSONSerialization.jsonObject(with: Data(try JSONStreamEncoder(pretty: true).encode(value))) as? NSObject
        #expect(pretty == foundation)
    }

    @Test func numbersThatJSONCannotHoldAreRefused() {
        #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode(["x": Double.infinity]) }
    }
}
