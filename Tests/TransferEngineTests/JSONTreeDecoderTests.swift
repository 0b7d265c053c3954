import Foundation
import Testing
@testable import TransferEngine

/// The control protocol's fast decoder gives what `JSONDecoder` gives — the same value or an
/// error — and takes the protocol's own requests on itself.
@Suite struct JSONTreeDecoderTests {
    /// A download and an upload with every field a client may send.
    private var richJobs: [NewJob] {
        var download = NewJob(kind: .download, url: "https://h.example/a b/ü.iso?x=1&y=\"2\"", path: "/d/ü \\ \"q\"\t.iso",
                              headers: ["X-A: 1", "Authorization: Bearer t/ok"], sha256: "AB12", overwrite: true,
                              priority: .high, batch: 7, limit: 4096, retries: 3, paused: true,
                              tls: TLSOptions(cacert: "/ca.pem", insecure: true, locationTrusted: true),
                              network: NetworkOptions(proxy: "http://p:3128", connectTimeout: 2.5, maxTime: 60, compressed: true,
                                                      user: "u", password: "p:w", ipVersion: .v6, resolve: ["h:443:127.0.0.1"]),
                              onComplete: "echo done", onFail: "echo failed", retryUnsafe: true, headerCommand: "/bin/token")
        download.onExists = .rename
        download.umask = 0o027
        download.maxFilesize = 1 << 40
        download.outputDirectory = "/d/"
        var upload = NewJob(kind: .upload, url: "s3://bucket/key", path: nil, method: "PUT",
                            form: [FormField(name: "title", value: "Holiday\nin\u{1F3D6}"),
                                   FormField(name: "photo", file: "/p/a.jpg", filename: "x.jpg", contentType: "image/jpeg")])
        upload.remote = RemoteOptions(kind: .s3, endpoint: "http://127.0.0.1:9000", region: "eu", chunkSize: 5 << 20)
        return [download, upload, NewJob(kind: .download, url: "http://h/a", path: "/tmp/a")]
    }

    /// Requests as `transferctl` sends them.
    private var requests: [ControlRequest] {
        let entries = richJobs.enumerated().map { ManifestEntry(line: $0.offset + 1, key: "k\($0.offset)", job: $0.element) }
        var submission = BatchSubmission(token: "ab12", final: true, name: "nightly", onComplete: "x", entries: entries)
        submission.umask = 0o022
        var prune = ControlRequest(.prune, batch: 3)
        prune.states = [.completed, .failed]
        prune.olderThan = 3600
        return [ControlRequest(.submit, submission: submission), ControlRequest(.add, job: richJobs[0]),
                ControlRequest(.add, job: richJobs[1]), ControlRequest(.list, state: .running, limit: 50, before: JobID(rawValue: 90)),
                ControlRequest(.pause, ids: [JobID(rawValue: 1), JobID(rawValue: 2)]), ControlRequest(.wait, all: true),
                ControlRequest(.limit, down: 1 << 20, up: 0, schedule: "08:00-18:00 1M"), prune]
    }

    @Test func takesTheProtocolsOwnRequestsAndDecodesThemAsJSONDecoderDoes() throws {
        for request in requests {
            for encoded in [try JSONStreamEncoder().encode(request), try JSONStreamEncoder(pretty: true).encode(request),
                            Array(try JSONEncoder().encode(request))] {
                let fast = encoded.withUnsafeBytes { JSONTreeDecoder.decodeFast(ControlRequest.self, $0) }
                #expect(fast == request, "\(request.command) taken on by the tree decoder itself")
                #expect(fast == (try JSONDecoder().decode(ControlRequest.self, from: Data(encoded))))
            }
        }
    }

    /// Documents (as request lines) each decoder must answer alike: what the tree decoder does
    /// not take on goes to `JSONDecoder`; nothing `JSONDecoder` refuses is accepted.
    @Test func answersAsJSONDecoderDoesAtTheEdges() throws {
        let documents = [
            // Taken on by the tree decoder:
            #"{"version":1,"command":"list"}"#, #" {"version" : 1 , "command" : "list" , "limit" : 0 } "#,
            #"{"version":1,"command":"list","id":-0}"#, #"{"version":1,"command":"list","state":null,"ids":[]}"#,
            #"{"version":1,"command":"limit","schedule":"a\"b\\c\/d\b\f\n\r\t"}"#, #"{"version":1,"command":"limit","schedule":""}"#,
            #"{"version":1,"command":"list","unknown":{"deep":[1,2.5e-3,true,null,{"x":[]}]}}"#,
            // Left to JSONDecoder (it decides):
            #"{"version":1,"command":"limit","schedule":"\u00fc\ud83c\udfd6"}"#, #"{"version":1.0,"command":"list"}"#,
            #"{"version":1e0,"command":"list"}"#, #"{"version":1,"command":"list","limit":9223372036854775808}"#,
            #"{"version":1,"command":"list","version":2}"#, #"{"version":1,"command":"list","rate":12345678901234567890}"#,
            // Refused by both:
            #"{"version":1,"command":"list""#, #"{"version":1,"command":"list"} x"#, #"{"version":01,"command":"list"}"#,
            #"{"version":1,"command":"lists"}"#, #"{"version":1}"#, #"{"version":"1","command":"list"}"#,
            #"{"version":1,"command":"list","all":1}"#, #"{"version":1,"command":"list","limit":1.5}"#,
            #"{"version":1,"command":"list","limit":-}"#, #"{"version":1,"command":"list","limit":1.}"#,
            #"{"version":1,"command":"list","limit":.5}"#, #"{"version":1,"command":"list","limit":+1}"#,
            #"{"version":1,"command":"list",}"#, #"{"version":1,"command":"list","ids":[1,]}"#, #"[1]"#, #""#, #"nul"#,
            #"{"version":1,"command":"limit","schedule":"\x"}"#, "{\"version\":1,\"command\":\"limit\",\"schedule\":\"a\u{01}b\"}",
            #"{"version":1,"command":"list","limit":1e400}"#, #"{"version":1,"command":"list","all":tru}"#,
        ].map { Array($0.utf8) } + [
            Array(#"{"version":1,"command":"limit","schedule":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8),  // not UTF-8
            Array(#"{"version":1,"command":"list","unknown":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: 300)
                + Array(repeating: UInt8(ascii: "]"), count: 300) + [UInt8(ascii: "}")],
        ]
        for document in documents {
            let expected = Result { try JSONDecoder().decode(ControlRequest.self, from: Data(document)) }
            let actual = Result { try JSONTreeDecoder().decode(ControlRequest.self, from: document) }
            let text = String(decoding: document.prefix(120), as: UTF8.self)
            switch (expected, actual) {
            case (.success(let want), .success(let got)): #expect(got == want, "\(text)")
            case (.failure(let want), .failure(let got)):
                #expect(DecodingSummary.describe(got) == DecodingSummary.describe(want), "\(text): JSONDecoder's error")
            default: Issue.record("\(text): JSONDecoder \(expected), tree decoder \(actual)")
            }
        }
    }

    @Test func leavesToJSONDecoderWhatItDoesNotTakeOn() {
        let handedOver = [#"{"a":"\u00fc"}"#, #"{"a":1.0}"#, #"{"a":1,"a":2}"#, #"{"a":9223372036854775808}"#]
        for document in handedOver {
            let fast = Array(document.utf8).withUnsafeBytes { JSONTreeDecoder.decodeFast([String: Int].self, $0) }
            #expect(fast == nil, "\(document)")
        }
        let members = (0...JSONTreeParser.maxMembers).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let large = Array("{\(members)}".utf8)
        #expect(large.withUnsafeBytes { JSONTreeDecoder.decodeFast([String: Int].self, $0) } == nil)
        #expect((try? JSONTreeDecoder().decode([String: Int].self, from: large))?.count == JSONTreeParser.maxMembers + 1)
        let data = Array(#"{"d":"AQI="}"#.utf8)
        #expect(data.withUnsafeBytes { JSONTreeDecoder.decodeFast([String: Data].self, $0) } == nil, "Data is JSONDecoder's (base64)")
        #expect((try? JSONTreeDecoder().decode([String: Data].self, from: data))?["d"] == Data([1, 2]))
    }
}
