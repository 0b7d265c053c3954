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
            #"{"version":1,"command":"limit","schedule":"\u00fc\ud83c\udfd6"}"#,
            #"{"version":1,"command":"list","limit":9223372036854775808}"#,
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
                // (A fraction where an integer goes is refused in the protocol's own words.)
                let words = DecodingSummary.describe(got)
                #expect(words == DecodingSummary.describe(want) || words.hasSuffix("is not a whole number, where one is expected"),
                        "\(text): JSONDecoder's error")
            default: Issue.record("\(text): JSONDecoder \(expected), tree decoder \(actual)")
            }
        }
    }

    /// A submit's entries are read from the tree by hand (`ManifestEntry.init(tree:state:)`):
    /// they must read every member `Decodable` reads, and answer as `JSONDecoder` does at the edges.
    @Test func readsEveryMemberOfAManifestEntryByHand() throws {
        var resumed = NewJob(kind: .download, url: "http://h/r", path: "/tmp/r")
        resumed.resumeData = try JSONDecoder().decode(ResumeData.self, from: Data(#"""
            {"version":1,"url":"http://h/r","path":"/tmp/r","partialPath":"/tmp/r.part","bytesReceived":10,"etag":"\"e\""}
            """#.utf8))
        for job in richJobs + [resumed] {
            let labels = Set(Mirror(reflecting: job).children.compactMap(\.label))
            #expect(labels == NewJob.treeKeys, "NewJob's stored properties and the members read by hand")
            let entry = ManifestEntry(line: 9, key: "k", job: job, relativePath: "a/b", sha256: "ff")
            #expect(Set(Mirror(reflecting: entry).children.compactMap(\.label)) == ManifestEntry.treeKeys)
            let request = ControlRequest(.submit, submission: BatchSubmission(token: "t", final: false, entries: [entry]))
            let encoded = try JSONStreamEncoder().encode(request)
            #expect(encoded.withUnsafeBytes { JSONTreeDecoder.decodeFast(ControlRequest.self, $0) } == request)
            #expect(try JSONDecoder().decode(ControlRequest.self, from: Data(encoded)) == request)
            #expect(try JSONDecoder().decode(ManifestEntry.self, from: JSONEncoder().encode(entry)) == entry,
                    "an entry through JSONEncoder's containers")
            for pretty in [false, true] {
                // The job written by hand is the job `Encodable` writes, byte for byte.
                let stream = JSONStream(pretty: pretty)
                try job.write(to: stream)
                #expect(stream.bytes == (try JSONStreamEncoder(pretty: pretty).encode(job)))
            }
        }
        let entry = #"{"line":1,"job":{"kind":"download","url":"http://h/a","headers":[],"overwrite":false,"priority":"normal","paused":false%@}%@}"#
        func submit(job: String = "", entry extra: String = "") -> [UInt8] {
            let line = entry.replacingOccurrences(of: "%@", with: job, options: [], range: entry.range(of: "%@"))
                .replacingOccurrences(of: "%@", with: extra)
            return Array(#"{"version":1,"command":"submit","submission":{"token":"t","final":true,"reuse":false,"checksum":false,"entries":[\#(line)]}}"#.utf8)
        }
        let documents = [
            submit(), submit(job: #","path":null,"limit":0,"retries":2,"umask":18,"onExists":"rename","extra":[1]"#),
            submit(entry: #","key":null,"relativePath":"x","sha256":null"#),
            submit(job: #","resumeData":null,"tls":null,"network":null,"form":null,"remote":null"#),
            submit(job: #","network":{"proxy":"http://p:1"},"tls":{"insecure":true}"#),
            // Refused by both, or left to JSONDecoder:
            submit(job: #","priority":null"#), submit(job: #","kind":"sideways""#), submit(job: #","paused":0"#),
            submit(job: #","headers":[1]"#), submit(job: #","headers":null"#), submit(job: #","retries":1.5"#),
            submit(job: #","limit":99999999999999999999"#), submit(job: #","retryUnsafe":"yes""#),
            submit(job: #","onExists":"ask""#), submit(job: #","network":{"ipVersion":5}"#),
            submit(entry: #","key":3"#), submit(entry: #","job":null"#), submit(entry: #","line":"1""#),
            Array(#"{"version":1,"command":"submit","submission":{"token":"t","final":true,"reuse":false,"checksum":false,"entries":[{"job":{}}]}}"#.utf8),
            Array(#"{"version":1,"command":"submit","submission":{"token":"t","final":true,"reuse":false,"checksum":false,"entries":{}}}"#.utf8),
            Array(#"{"version":1,"command":"submit","submission":{"token":"t","final":true,"reuse":false,"checksum":false}}"#.utf8),
        ]
        for document in documents {
            let expected = Result { try JSONDecoder().decode(ControlRequest.self, from: Data(document)) }
            let actual = Result { try JSONTreeDecoder().decode(ControlRequest.self, from: document) }
            let text = String(decoding: document, as: UTF8.self)
            switch (expected, actual) {
            case (.success(let want), .success(let got)): #expect(got == want, "\(text)")
            case (.failure(let want), .failure(let got)):
                #expect(DecodingSummary.describe(got) == DecodingSummary.describe(want), "\(text): JSONDecoder's error")
            default: Issue.record("\(text): JSONDecoder \(expected), tree decoder \(actual)")
            }
        }
        let plain = documents[0].withUnsafeBytes { JSONTreeDecoder.decodeFast(ControlRequest.self, $0) }
        #expect(plain?.submission?.entries.first?.job.url == "http://h/a", "a plain entry is taken on by the tree decoder")
    }

    /// What JSONDecoder would take but the protocol refuses: a whole number written with a
    /// fraction or an exponent, and a NUL, which the C boundary would cut a path at.
    @Test func refusesFractionsForIntegersAndNULsThatJSONDecoderTakes() throws {
        for document in [#"{"version":1.0,"command":"list"}"#, #"{"version":1e0,"command":"list"}"#,
                         #"{"version":1,"command":"limit","down":1e3}"#, #"{"version":1,"command":"limit","down":1000.0}"#,
                         #"{"version":1,"command":"limit","schedule":"a\u0000b"}"#,
                         #"{"version":1,"command":"add","job":{"kind":"download","url":"http://h/x","path":"/s/evil\u0000/../../y","headers":[],"#
                            + #""overwrite":false,"priority":"normal","paused":true}}"#] {
            #expect((try? JSONDecoder().decode(ControlRequest.self, from: Data(document.utf8))) != nil, "JSONDecoder takes \(document)")
            #expect(throws: DecodingError.self, "\(document)") { try JSONTreeDecoder().decode(ControlRequest.self, from: Array(document.utf8)) }
        }
        // An escaped backslash before `u0000` is text, not a NUL.
        let text = try JSONTreeDecoder().decode([String: String].self, from: Array(#"{"a":"\\u0000\u00fc"}"#.utf8))
        #expect(text["a"] == "\\u0000ü")
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
