import Foundation
import Testing
@testable import TransferEngine

@Suite struct MultipartBodyTests {
    let directory = TemporaryDirectory()

    func source(_ name: String, _ bytes: [UInt8]) throws -> SourceFile {
        let path = directory.file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try SourceFile.snapshot(path).get()
    }

    /// Reads the whole body with reads of `chunk` bytes.
    func drain(_ body: inout some UploadBody, chunk: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = try body.read(into: buffer)
            if count == 0 { return out }
            out.append(contentsOf: buffer[0..<count])
        }
    }

    @Test func encodesFieldsAndFilesExactly() throws {
        let file = try source("a.txt", Array("hi\r\n--x".utf8))
        let form: [FormPart] = [.field(name: "title", value: "Holiday"),
                                .file(name: "doc", source: file, filename: "a.txt", contentType: "text/plain")]
        var body = MultipartBody(form: form, boundary: "B", readers: [try SourceReader(file)])
        let expected = "--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday" +
            "\r\n--B\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--x" +
            "\r\n--B--\r\n"
        #expect(body.contentLength == Int64(expected.utf8.count))
        #expect(body.contentType == "multipart/form-data; boundary=B")
        #expect(try drain(&body, chunk: 4096) == Array(expected.utf8))
    }

    @Test func everyReadSizeProducesTheSameBytes() throws {
        let data = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let big = try source("big.bin", data)
        let empty = try source("empty.bin", [])
        let form: [FormPart] = [.file(name: "big", source: big, filename: "big.bin", contentType: ContentType.fallback),
                                .field(name: "", value: ""),
                                .file(name: "empty", source: empty, filename: "empty.bin", contentType: ContentType.fallback)]
        func make() throws -> MultipartBody {
            MultipartBody(form: form, boundary: "transferd-x", readers: [try SourceReader(big), try SourceReader(empty)])
        }
        var whole = try make()
        let reference = try drain(&whole, chunk: 1 << 20)
        #expect(Int64(reference.count) == whole.contentLength)
        for chunk in [1, 2, 3, 7, 64, 1000, 16_384] {
            var body = try make()
            #expect(try drain(&body, chunk: chunk) == reference, "chunk \(chunk)")
            #expect(body.phase == .done)
        }
    }

    @Test func measuredLengthNeedsNoOpenFiles() throws {
        let file = try source("m.bin", [UInt8](repeating: 1, count: 1234))
        let form: [FormPart] = [.file(name: "f", source: file, filename: "m.bin", contentType: "x/y")]
        var sent = MultipartBody(form: form, boundary: "b", readers: [try SourceReader(file)])
        #expect(MultipartBody(form: form, boundary: "b").contentLength == Int64(try drain(&sent, chunk: 100).count))
    }

    @Test func aFileThatChangedFailsAsSourceChanged() throws {
        let file = try source("c.bin", [UInt8](repeating: 1, count: 100))
        try Data([UInt8](repeating: 2, count: 50)).write(to: URL(fileURLWithPath: file.path))
        #expect(throws: TransferError.self) { _ = try SourceReader(file) }
        let reader = try? SourceReader(SourceFile(path: file.path, size: 50, modified: 0))
        #expect(reader == nil, "a different mtime is a change too")
        do {
            _ = try SourceReader(file)
        } catch {
            #expect(error.code == "source_changed")
            #expect(error.message.contains(file.path))
        }
    }

    @Test func quotesAndLineBreaksAreEscapedAsBrowsersDo() {
        #expect(BodyPart.escape("a\"b\r\nc; é") == Array("a%22b%0D%0Ac; é".utf8))
    }

    @Test func aFileNameThatIsNotUTF8GoesAsItsBytes() {
        let name = RawPath.string(fromBytes: [0x64, 0xFF, 0x22, 0x2E, 0x74])  // d\xff".t
        #expect(BodyPart.escape(name) == [0x64, 0xFF] + Array("%22.t".utf8))
    }

    @Test func boundaryAvoidsTheFormsText() {
        var generator = SequenceGenerator(values: [1, 2, 3, 4])
        let first = "transferd-" + String(repeating: "0", count: 15) + "1" + String(repeating: "0", count: 15) + "2"
        let boundary = Boundary.make(avoiding: ["xx" + first + "yy"], using: &generator)
        #expect(boundary != first)
        #expect(boundary.hasPrefix("transferd-"))
        #expect(boundary.count == "transferd-".count + 32)
    }

    @Test func rawBodyIsTheFile() throws {
        let file = try source("r.bin", Array("raw body".utf8))
        var body = RawBody(reader: try SourceReader(file))
        #expect(body.contentLength == 8)
        #expect(body.contentType == ContentType.fallback)
        #expect(try drain(&body, chunk: 3) == Array("raw body".utf8))
    }
}

/// Returns the given values in turn (for a repeatable boundary).
struct SequenceGenerator: RandomNumberGenerator {
    var values: [UInt64]
    private var index = 0

    init(values: [UInt64]) { self.values = values }

    mutating func next() -> UInt64 {
        defer { index += 1 }
        return values[index % values.count]
    }
}

@Suite struct FormFieldTests {
    @Test func parsesCurlSyntax() throws {
        #expect(try FormField.parse("title=Holiday") == FormField(name: "title", value: "Holiday"))
        #expect(try FormField.parse("empty=") == FormField(name: "empty", value: ""))
        #expect(try FormField.parse("f=@/tmp/a.txt") == FormField(name: "f", file: "/tmp/a.txt"))
        #expect(try FormField.parse("f=@/tmp/a.txt;type=text/csv;filename=b.csv")
                == FormField(name: "f", file: "/tmp/a.txt", filename: "b.csv", contentType: "text/csv"))
        #expect(try FormField.parse(#"f=@"/tmp/a;b.txt";filename="we;ird \"q\" é.txt""#)
                == FormField(name: "f", file: "/tmp/a;b.txt", filename: #"we;ird "q" é.txt"#))
    }

    @Test func refusesMalformedParts() {
        for text in ["novalue", "=x", "f=@", "f=@a;color=red", #"f=@"unterminated"#, "f=<file", "f=@a;type", #"f=@"a.txt"junk;type=x/y"#] {
            #expect(throws: FormField.ParseError.self, "\(text)") { try FormField.parse(text) }
        }
    }

    @Test func guessesContentTypes() {
        #expect(ContentType.guess(forFilename: "a.TXT") == "text/plain")
        #expect(ContentType.guess(forFilename: "x.json") == "application/json")
        #expect(ContentType.guess(forFilename: "photo.jpeg") == "image/jpeg")
        #expect(ContentType.guess(forFilename: "noext") == ContentType.fallback)
        #expect(ContentType.guess(forFilename: ".hidden") == ContentType.fallback)
    }
}
