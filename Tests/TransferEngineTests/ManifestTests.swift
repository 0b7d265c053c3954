import Foundation
import Testing
@testable import TransferEngine

@Suite struct ManifestTests {
    private let cwd = FileManager.default.currentDirectoryPath

    private func parse(_ lines: String...) throws(Manifest.LineError) -> [ManifestEntry] {
        try Manifest.parse(Array(lines.joined(separator: "\n").utf8))
    }

    /// The error a manifest is refused with (nil when it parses).
    private func failure(_ lines: String...) -> Manifest.LineError? {
        do {
            _ = try Manifest.parse(Array(lines.joined(separator: "\n").utf8))
            return nil
        } catch {
            return error
        }
    }

    private let download = #""download":{"url":"http://h/a","output":"/tmp/a"}"#

    // MARK: Good lines

    @Test func parsesADownloadLine() throws {
        let entries = try parse("""
            {"key":"k1","download":{"url":"https://example.com/a.iso","output":"out/a.iso","sha256":"ABCDEF",\
            "overwrite":true,"headers":["X-A: 1"],"limitRate":"512K","priority":"high","retry":4,"paused":true,\
            "onComplete":"echo done","onFail":"echo failed"}}
            """)
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.line == 1)
        #expect(entry.key == "k1")
        #expect(entry.relativePath == nil)
        #expect(entry.job == NewJob(kind: .download, url: "https://example.com/a.iso", path: cwd + "/out/a.iso",
                                    headers: ["X-A: 1"], sha256: "abcdef", overwrite: true, priority: .high,
                                    limit: 512 * 1024, retries: 4, paused: true, onComplete: "echo done",
                                    onFail: "echo failed"))
    }

    @Test func aLineMayTrustEveryLocation() throws {
        let entry = try #require(try parse(#"{"download":{"url":"http://h/a","output":"/a","locationTrusted":true}}"#).first)
        #expect(entry.job.tls == TLSOptions(locationTrusted: true))
        let untrusted = try #require(try parse(#"{"download":{"url":"http://h/a","output":"/a","locationTrusted":false}}"#).first)
        #expect(untrusted.job.tls == nil)
    }

    @Test func aMinimalDownloadTakesTheDefaults() throws {
        let entry = try #require(try parse(#"{"download":{"url":"http://h/a","output":"/abs/a"}}"#).first)
        #expect(entry.key == nil)
        #expect(entry.job == NewJob(kind: .download, url: "http://h/a", path: "/abs/a"))
        #expect(entry.job.priority == .normal)
        #expect(entry.job.limit == nil)
        #expect(entry.job.retries == nil)
        #expect(entry.job.paused == false)
        #expect(entry.job.overwrite == false)
    }

    @Test func relativeOutputsAreMadeAbsoluteAgainstTheCurrentDirectory() throws {
        let entries = try parse(#"{"download":{"url":"http://h/a","output":"a.bin"}}"#,
                                #"{"download":{"url":"http://h/b","output":"./sub/../b.bin"}}"#,
                                #"{"download":{"url":"http://h/c","output":"/abs/./c.bin"}}"#)
        #expect(entries.map(\.job.path) == [cwd + "/a.bin", cwd + "/b.bin", "/abs/c.bin"])
    }

    @Test func parsesAFormUpload() throws {
        let entries = try parse("""
            {"key":"u","upload":{"url":"http://h/up","form":["title=Holiday","photo=@pics/a.jpg;type=image/jpeg;filename=x.jpg",\
            "raw=@/abs/b.bin"],"method":"put","priority":"low","limitRate":2048}}
            """)
        let entry = try #require(entries.first)
        #expect(entry.key == "u")
        #expect(entry.job.kind == .upload)
        #expect(entry.job.url == "http://h/up")
        #expect(entry.job.path == nil)
        #expect(entry.job.method == "PUT")
        #expect(entry.job.priority == .low)
        #expect(entry.job.limit == 2048)
        #expect(entry.job.form == [
            FormField(name: "title", value: "Holiday"),
            FormField(name: "photo", file: cwd + "/pics/a.jpg", filename: "x.jpg", contentType: "image/jpeg"),
            FormField(name: "raw", file: "/abs/b.bin"),
        ])
    }

    @Test func parsesAFileUpload() throws {
        let entry = try #require(try parse(#"{"upload":{"url":"http://h/up","file":"data/x.bin","headers":["A: b"]}}"#).first)
        #expect(entry.job == NewJob(kind: .upload, url: "http://h/up", path: cwd + "/data/x.bin", headers: ["A: b"]))
        #expect(entry.job.form == nil)
        #expect(entry.job.method == nil)
    }

    @Test func anEmptyFormWithAFileIsAFileUpload() throws {
        let entry = try #require(try parse(#"{"upload":{"url":"http://h/up","form":[],"file":"/x"}}"#).first)
        #expect(entry.job.form == nil)
        #expect(entry.job.path == "/x")
    }

    @Test(arguments: [
        ("1000", Int64?.some(1000)),
        ("\"512K\"", 512 * 1024),
        ("\"2M\"", 2 * 1024 * 1024),
        ("\"1.5K\"", 1536),
        ("\"off\"", nil),
        ("\"0\"", nil),
        ("0", nil),
    ])
    func limitRateAsANumberOrAString(json: String, expected: Int64?) throws {
        let entry = try #require(try parse(#"{"download":{"url":"http://h/a","output":"/a","limitRate":\#(json)}}"#).first)
        #expect(entry.job.limit == expected)
    }

    @Test func blankLinesAreSkippedButCounted() throws {
        let entries = try parse("", "{\(download),\"key\":\"a\"}", "   ", "\t \r", "{\(download),\"key\":\"b\"}", "", "")
        #expect(entries.map(\.line) == [2, 5])
        #expect(entries.map(\.key) == ["a", "b"])
    }

    @Test func emptyOrBlankManifestsHaveNoEntries() throws {
        #expect(try Manifest.parse([]).isEmpty)
        #expect(try parse("", " ", "").isEmpty)
    }

    @Test func crlfLineEndingsAreAccepted() throws {
        let entries = try Manifest.parse(Array("{\(download)}\r\n\r\n{\(download),\"key\":\"x\"}\r\n".utf8))
        #expect(entries.map(\.line) == [1, 3])
    }

    @Test func entriesKeepTheirOrder() throws {
        let entries = try parse(#"{"key":"z","download":{"url":"http://h/1","output":"/1"}}"#,
                                #"{"key":"a","download":{"url":"http://h/2","output":"/2"}}"#,
                                #"{"download":{"url":"http://h/3","output":"/3"}}"#)
        #expect(entries.map(\.job.url) == ["http://h/1", "http://h/2", "http://h/3"])
        #expect(entries.map(\.key) == ["z", "a", nil])
    }

    // MARK: Read a chunk at a time

    @Test func aReaderInChunksGivesWhatParseGivesWithTheSameLineNumbers() throws {
        let lines = (1...7).map { #"{"key":"k\#($0)","download":{"url":"http://h/\#($0)","output":"/\#($0)"}}"# }
        let bytes = Array((lines[..<3] + ["", " \r"] + lines[3...] + ["", "\t"]).joined(separator: "\n").utf8)
        var reader = ManifestReader(bytes)
        var chunks: [[Int]] = []
        while !reader.isAtEnd { chunks.append(try reader.next(3).map(\.line)) }
        #expect(chunks == [[1, 2, 3], [6, 7, 8], [9]], "blank lines are counted, trailing ones end the manifest")
        #expect(try reader.next(3).isEmpty)
        #expect(chunks.flatMap { $0 } == (try Manifest.parse(bytes)).map(\.line))
    }

    @Test func aKeyIsCheckedAgainstTheLinesOfEarlierChunks() throws {
        let bytes = Array([#"{"key":"a","download":{"url":"http://h/1","output":"/1"}}"#,
                           #"{"key":"b","download":{"url":"http://h/2","output":"/2"}}"#,
                           #"{"key":"a","download":{"url":"http://h/3","output":"/3"}}"#].joined(separator: "\n").utf8)
        var reader = ManifestReader(bytes)
        #expect(try reader.next(2).count == 2)
        #expect(!reader.isAtEnd)
        #expect(throws: Manifest.LineError(line: 3, message: "key 'a' repeats line 1")) { try reader.next(2) }
    }

    /// Plain download lines are read by hand (`ManifestLine.plain`): each line gives what
    /// `Decodable` gives, the same entry or the same error.
    @Test func plainLinesReadByHandGiveWhatDecodableGives() throws {
        let lines = [
            #"{"download":{"url":"http://h/a","output":"a"}}"#,
            #"{"key":"k","download":{"url":"http://h/a","output":"/d/a","sha256":"\#(String(repeating: "AB", count: 32))"}}"#,
            #"{"key":null,"download":{"url":"http://h/a","outputDir":"d/","overwrite":true,"onExists":"rename","compressed":false}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","sha256":null,"overwrite":null,"onExists":null,"compressed":null}}"#,
            #"{"download":{"output":"/a","url":"http://h/a"},"key":"late"}"#,
            #"{"download":{"url":"http://h/a"}}"#,  // read by hand, refused as a download (no output) alike
            #"{"download":{"url":"http://h/a","output":"/a","paused":true,"priority":"low","retry":0,"headers":["A: 1","B: 2"]}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","paused":null,"priority":null,"retry":null,"headers":null}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","retry":101}}"#,  // past the limit: refused alike
            #"{"download":{"url":"http://h/a","output":"/a","headers":[]}}"#,
            // Left to Decodable, which reads or refuses them:
            #"{"download":{"url":"http://h/a","output":"/a","output":null}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","retry":3,"paused":true,"limitRate":"1M"}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","retry":1.0}}"#, #"{"download":{"url":"http://h/a","output":"/a","priority":"urgent"}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","headers":["A: 1",2]}}"#, #"{"download":{"url":"http://h/a","output":"/a","paused":1}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","maxFilesize":"1M"}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","onExists":"ask"}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","overwrite":"yes"}}"#,
            #"{"download":{"url":"http://h/a","output":"/a","sha265":"ab"}}"#,
            #"{"download":{"url":null,"output":"/a"}}"#, #"{"download":{"output":"/a"}}"#,
            // Read by hand, refused alike:
            #"{"download":{"url":"http://h/a","output":"/a","outputDir":"/d"}}"#,
            #"{"download":{"url":"ftp://h/a","output":"/a"}}"#, #"{"download":{"url":"http://h/a","output":"d/"}}"#,
            #"{"key":"","download":{"url":"http://h/a","output":"/a"}}"#,
            // Left to Decodable:
            #"{"key":7,"download":{"url":"http://h/a","output":"/a"}}"#,
            #"{"download":null}"#, #"{"download":{}}"#, #"{"key":"k"}"#, #"{"keys":"k","download":{"url":"http://h/a","output":"/a"}}"#,
            #"{"download":{"url":"http://h/a","output":"/a"},"upload":{"url":"http://h/u","file":"/u"}}"#,
            #"{"download":{"url":"http://h/a","output":"\u00fc"}}"#, #"{"download":{"url":"http://h/a","output":"/a"}"#, #"[]"#,
        ]
        // Read by hand: the plain lines, and lines refused after reading (no output and a
        // directory both, a bad URL or output, an empty key), which `job()` refuses alike.
        let byHand = Set(0...9).union(22...25)
        #expect(lines.indices.filter { ManifestReader.isPlain(lines[$0]) } == byHand.sorted())
        for line in lines {
            func read(byHand: Bool) -> Result<[ManifestEntry], Manifest.LineError> {
                var reader = ManifestReader(Array(line.utf8), readsPlainLines: byHand)
                return Result { () throws(Manifest.LineError) in try reader.next(1) }
            }
            #expect(read(byHand: true) == read(byHand: false), "\(line)")
        }
        #expect((try? read(lines[0]))?.first?.job.path?.hasPrefix("/") == true, "a relative output is made absolute")
    }

    private func read(_ line: String) throws -> [ManifestEntry] {
        var reader = ManifestReader(Array(line.utf8))
        return try reader.next(1)
    }

    @Test func aReaderOfNothingOrOfBlankLinesIsAtEnd() throws {
        #expect(ManifestReader([]).isAtEnd)
        #expect(ManifestReader(Array("\n \r\n\t".utf8)).isAtEnd)
        #expect(!ManifestReader(Array("\n{".utf8)).isAtEnd)
        var noNewline = ManifestReader(Array("{\(download)}".utf8))
        #expect(try noNewline.next(5).map(\.line) == [1])
        #expect(noNewline.isAtEnd)
    }

    // MARK: Errors

    @Test func invalidJSONNamesItsLine() throws {
        let error = try #require(failure("{\(download)}", "", "{\"download\": {", "{\(download)}"))
        #expect(error.line == 3)
        #expect(!error.message.isEmpty)
        #expect(!error.message.contains("Swift.DecodingError"))
    }

    @Test func notAnObjectIsRefused() {
        #expect(failure("{\(download)}", "[1, 2]") == Manifest.LineError(line: 2, message: "wrong type at ''"))
    }

    @Test func unknownTopLevelField() {
        #expect(failure("{\(download)}", "{\(download),\"kye\":\"a\"}")
                == Manifest.LineError(line: 2, message: "unknown field 'kye' in the line"))
    }

    @Test func unknownFieldInADownload() {
        #expect(failure(#"{"download":{"url":"http://h/a","output":"/a","sha265":"x"}}"#)
                == Manifest.LineError(line: 1, message: "unknown field 'sha265' in download"))
    }

    @Test func unknownFieldInAnUpload() {
        #expect(failure("", #"{"upload":{"url":"http://h/a","file":"/a","output":"/b"}}"#)
                == Manifest.LineError(line: 2, message: "unknown field 'output' in upload"))
    }

    @Test func bothDownloadAndUploadIsRefused() {
        #expect(failure(#"{"download":{"url":"http://h/a","output":"/a"},"upload":{"url":"http://h/a","file":"/a"}}"#)
                == Manifest.LineError(line: 1, message: #"a line needs exactly one of "download" and "upload""#))
    }

    @Test func neitherDownloadNorUploadIsRefused() {
        let expected = #"a line needs exactly one of "download" and "upload""#
        #expect(failure("{}") == Manifest.LineError(line: 1, message: expected))
        #expect(failure("{\(download)}", #"{"key":"k"}"#) == Manifest.LineError(line: 2, message: expected))
    }

    @Test func anUploadNeedsFormOrFileButNotBoth() {
        let expected = #"an upload needs "form" or "file", not both and not neither"#
        #expect(failure(#"{"upload":{"url":"http://h/a","form":["a=b"],"file":"/a"}}"#)
                == Manifest.LineError(line: 1, message: expected))
        #expect(failure(#"{"upload":{"url":"http://h/a"}}"#) == Manifest.LineError(line: 1, message: expected))
        #expect(failure(#"{"upload":{"url":"http://h/a","form":[]}}"#) == Manifest.LineError(line: 1, message: expected))
    }

    @Test func aBadFormPartIsRefusedWithItsMessage() throws {
        let error = try #require(failure("", "", #"{"upload":{"url":"http://h/a","form":["novalue"]}}"#))
        #expect(error.line == 3)
        #expect(error.message.contains("novalue"))
    }

    @Test func aRepeatedKeyNamesTheFirstLine() {
        #expect(failure(#"{"key":"a","download":{"url":"http://h/1","output":"/1"}}"#,
                        #"{"key":"b","download":{"url":"http://h/2","output":"/2"}}"#,
                        "",
                        #"{"key":"a","download":{"url":"http://h/3","output":"/3"}}"#)
                == Manifest.LineError(line: 4, message: "key 'a' repeats line 1"))
    }

    @Test func linesWithoutKeysNeverRepeat() throws {
        #expect(try parse("{\(download)}", "{\(download)}").count == 2)
    }

    @Test func aBadLimitRateStringIsRefused() throws {
        let error = try #require(failure("{\(download)}", #"{"download":{"url":"http://h/a","output":"/a","limitRate":"fast"}}"#))
        #expect(error.line == 2)
        #expect(error.message.hasPrefix("limitRate: "))
        #expect(error.message.contains("'fast'"))
    }

    @Test func aLimitRateOfTheWrongTypeIsRefused() throws {
        #expect(failure(#"{"upload":{"url":"http://h/a","file":"/a","limitRate":true}}"#)
                == Manifest.LineError(line: 1, message: "wrong type at 'upload.limitRate'"))
    }

    @Test func aNegativeLimitRateNumberIsRefused() throws {
        let error = try #require(failure(#"{"download":{"url":"http://h/a","output":"/a","limitRate":-5}}"#))
        #expect(error.line == 1)
        #expect(error.message.contains("limitRate"))
        let string = try #require(failure(#"{"download":{"url":"http://h/a","output":"/a","limitRate":"-5"}}"#))
        #expect(string.message.hasPrefix("limitRate: "))
    }

    @Test func anOutputThatIsNotAFileIsRefused() throws {
        for output in ["", "dir/"] {
            let error = try #require(failure(#"{"download":{"url":"http://h/a","output":"\#(output)"}}"#))
            #expect(error.message.contains("must name a file"))
        }
    }

    @Test func anEmptyKeyIsRefused() throws {
        let error = try #require(failure(#"{"key":"","download":{"url":"http://h/a","output":"/a"}}"#))
        #expect(error.message == "a key must not be empty")
    }

    @Test func aBadPriorityIsRefused() throws {
        let error = try #require(failure("", #"{"download":{"url":"http://h/a","output":"/a","priority":"urgent"}}"#))
        #expect(error.line == 2)
        #expect(error.message.hasPrefix("invalid value at 'download.priority'"))
        #expect(error.message.contains("urgent"))
    }

    @Test func aMissingRequiredFieldIsNamed() {
        #expect(failure(#"{"download":{"url":"http://h/a"}}"#)
                == Manifest.LineError(line: 1, message: "missing field 'download.output' (a file; or 'download.outputDir', a directory)"))
        #expect(failure(#"{"upload":{"file":"/a"}}"#)
                == Manifest.LineError(line: 1, message: "missing field 'upload.url'"))
    }

    @Test func aWrongTypeIsNamed() {
        #expect(failure(#"{"download":{"url":"http://h/a","output":"/a","retry":"three"}}"#)
                == Manifest.LineError(line: 1, message: "wrong type at 'download.retry'"))
    }

    @Test func aURLLibcurlRefusesNamesItsLine() throws {
        let space = try #require(failure("{\(download)}", #"{"download":{"url":"http://h/with space.bin","output":"/a"}}"#))
        #expect(space.line == 2)
        #expect(space.message.hasPrefix("malformed URL 'http://h/with space.bin': "))
        let port = try #require(failure(#"{"upload":{"url":"http://127.0.0.1:99999/x","file":"/a"}}"#))
        #expect(port.line == 1)
        #expect(port.message.contains("65535"))
    }

    @Test func theFirstBadLineWins() throws {
        let error = try #require(failure("{\(download)}", "nope", #"{"key":1}"#))
        #expect(error.line == 2)
    }
}
