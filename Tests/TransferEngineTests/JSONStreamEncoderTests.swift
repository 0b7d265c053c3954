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

    /// Whole numbers and thousandths take a shorter way than `description`: the digits are the same.
    @Test func doublesAreWrittenAsTheirShortestDigits() throws {
        var generator = SplitMix64(seed: 18)
        var values: [Double] = [0, -0.0, 0.001, -0.001, 0.5, 1, 12.5, 100, 0.1, 0.2, 0.3, 1.005, 2.675, 1e-3, 1e-4, 1e-5,
                                123_456_789.123, 999_999_999_999.999, 1e12, 1e15, 1e16, 1e300, 0.1 + 0.2, 1.0 / 3]
        for _ in 0..<5_000 {
            let micro = Int64(bitPattern: generator.next()) % 10_000_000_000_000
            values.append(Double(micro) / 1000)
            values.append(Double(micro % 100_000) / 1000)
            values.append(Double(bitPattern: generator.next() >> 2))
        }
        for value in values where value.isFinite {
            var expected = value.description
            if expected.hasSuffix(".0") { expected.removeLast(2) }
            let written = String(decoding: try JSONStreamEncoder().encode(value), as: UTF8.self)
            #expect(written == expected, "\(value)")
        }
        #expect(JSONStream.thousandths(0.001) == 1)
        #expect(JSONStream.thousandths(-0.0) == nil)
        #expect(JSONStream.thousandths(1.0 / 3) == nil)
    }

    /// The store's metrics, written by hand, are what `Codable` writes.
    @Test func attemptMetricsAreStoredAsCodableWritesThem() throws {
        let full = AttemptMetrics(nameLookupMs: 0.012, connectMs: 0.25, tlsMs: 0, firstByteMs: 1.5, totalMs: 12_345.678,
                                  httpVersion: "1.1", remoteAddress: "127.0.0.1:8080", bytesPerSecond: 52_428_800)
        var bare = full
        bare.httpVersion = nil
        bare.remoteAddress = nil
        bare.totalMs = 1.0 / 3
        for metrics in [full, bare] {
            #expect(try metrics.storedJSON() == String(decoding: try JSONStreamEncoder().encode(metrics), as: UTF8.self))
            #expect(try JSONDecoder().decode(AttemptMetrics.self, from: Data(metrics.storedJSON().utf8)) == metrics)
        }
    }

    @Test func numbersThatJSONCannotHoldAreRefused() {
        #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode(["x": Double.infinity]) }
    }
}
