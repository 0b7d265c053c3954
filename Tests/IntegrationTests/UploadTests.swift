import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Multipart and raw uploads against a real third-party multipart parser (werkzeug, see
/// Harness/upload_receiver.py): what the server parses must be exactly what was given.
final class UploadTests: UploadTestCase {
    func testFilesAndFieldsArriveAsSentInOrder() throws {
        let notes = try makeUploadFile("notes.txt", Data(String(repeating: "line of notes\n", count: 97).utf8))
        let photo = try makeUploadFile("photo.png", size: 100 * KiB + 3)
        let blob = try makeUploadFile("blob.bin", size: 2 * MiB + 17)
        let title = "Grüße aus 日本 = 1/2"
        let comment = "second field, plain ASCII"
        let expected: [ExpectedPart] = [
            .field(name: "title", value: title),
            .file(name: "notes", source: notes, filename: "notes.txt", contentType: "text/plain"),
            .field(name: "comment", value: comment),
            .file(name: "photo", source: photo, filename: "photo.png", contentType: "image/png"),
            .file(name: "blob", source: blob, filename: "blob.bin", contentType: "application/x-transferd-test"),
        ]

        // --json prints the new job object.
        let created = try XCTUnwrap(try cli.json([
            "upload", receiver.uploadURL(),
            "-F", "title=\(title)",
            "-F", "notes=@\(notes.path)",
            "-F", "comment=\(comment)",
            "-F", "photo=@\(photo.path)",
            "-F", "blob=@\(blob.path);type=application/x-transferd-test",
        ]) as? JobJSON, "upload --json prints an object")
        let id = try XCTUnwrap(created.id, "job id: \(created.jsonText)")
        XCTAssertEqual(created.kind, "upload", created.jsonText)
        XCTAssertEqual(created.method, "POST", "multipart uploads POST by default: \(created.jsonText)")
        assertForm(created, expected)

        try waitCompleted(id)
        let uploads = try receiver.awaitUploads(count: 1)
        XCTAssertEqual(uploads.count, 1, "one request, one upload: \(receiver.describeLog())")
        let manifest = try XCTUnwrap(uploads.first)
        XCTAssertEqual(manifest["method"] as? String, "POST")
        try assertParts(manifest, upload: 1, expected)

        let job = try cli.job(id)
        XCTAssertEqual(job.state, "completed", job.jsonText)
        XCTAssertEqual(job.httpStatus, 200, job.jsonText)
        XCTAssertNil(job.errorObject, job.jsonText)
        if let total = job.bytesTotal {
            XCTAssertEqual(job.bytesDone, total, "a completed upload sent everything: \(job.jsonText)")
        }
        assertForm(job, expected)
        let body = try assertResponse(job, status: 200)
        XCTAssertEqual(jsonInt(body["upload"]), 1, "response body: \(body)")
        XCTAssertEqual(jsonInt(body["parts"]), 5, "response body: \(body)")
    }

    func testEmptyFileAndBoundaryLookalikeBytes() throws {
        let empty = try makeUploadFile("empty.dat", Data())
        // Everything a careless encoder or parser trips over: bare CRLFs, dashes, lines that
        // look like transferd's own boundary (with and without the closing "--"), a fake
        // part header, and a file that ends in the middle of a would-be delimiter.
        var bytes = Data()
        bytes.append(Files.randomData(count: 64 * KiB))
        bytes.append(Data("\r\n".utf8))
        bytes.append(Data("--".utf8))
        bytes.append(Data("\r\n--transferd-".utf8))
        bytes.append(Data("\r\n--transferd-0123456789abcdef0123456789abcdef\r\n".utf8))
        bytes.append(Data("Content-Disposition: form-data; name=\"fake\"\r\n\r\nnot a part".utf8))
        bytes.append(Files.randomData(count: 3 * KiB + 1))
        bytes.append(Data("\r\n--transferd-0123456789abcdef0123456789abcdef--\r\n".utf8))
        bytes.append(Data("--\r\n\r\n--".utf8))
        bytes.append(Data("\r\n--transferd-".utf8))
        let tricky = try makeUploadFile("tricky.bin", bytes)
        let expected: [ExpectedPart] = [
            .file(name: "empty", source: empty, filename: "empty.dat", contentType: "application/octet-stream"),
            .file(name: "tricky", source: tricky, filename: "tricky.bin", contentType: "application/octet-stream"),
            .field(name: "after", value: "still parsed"),
        ]

        let id = try cli.upload(receiver.uploadURL(), [
            "-F", "empty=@\(empty.path)", "-F", "tricky=@\(tricky.path)", "-F", "after=still parsed",
        ])
        try waitCompleted(id)
        let manifest = try XCTUnwrap(try receiver.awaitUploads(count: 1).first)
        try assertParts(manifest, upload: 1, expected)
        let emptyPart = (manifest["parts"] as? [[String: Any]])?.first
        XCTAssertEqual(jsonInt(emptyPart?["size"]), 0, "the empty file arrives empty: \(manifest.jsonText)")

        // The boundary is long and random (>= 128 bits: at least 22 characters even in base64)
        // and does not occur in the body's files.
        let boundary = try XCTUnwrap(manifest["boundary"] as? String, manifest.jsonText)
        XCTAssertGreaterThanOrEqual(boundary.count, 22, "boundary \(boundary)")
        XCTAssertNil(bytes.range(of: Data(boundary.utf8)), "boundary occurs in the file")
        let job = try cli.job(id)
        XCTAssertEqual(job.state, "completed", job.jsonText)
        assertForm(job, expected)
    }

    func testHostileFilenameRoundTrips() throws {
        // A source path with a semicolon, given quoted after @ (curl's -F syntax).
        let source = try makeUploadFile("odd;dir/odd;path.txt", Data("hostile filename payload\n".utf8))
        XCTAssertTrue(source.path.contains(";"))
        let given = "we;ird \"name\" é 日本.txt"
        let quotedGiven = given.replacingOccurrences(of: "\"", with: "\\\"")
        let id = try cli.upload(receiver.uploadURL(), [
            "-F", "doc=@\"\(source.path)\";filename=\"\(quotedGiven)\"",
            "-F", "plain=@\"\(source.path)\"",
        ])
        try waitCompleted(id)
        let manifest = try XCTUnwrap(try receiver.awaitUploads(count: 1).first)
        let parts = manifest["parts"] as? [[String: Any]] ?? []
        XCTAssertEqual(parts.count, 2, manifest.jsonText)

        // On the wire: HTML's multipart/form-data encoding, which browsers and curl use, sends
        // `"` inside a quoted parameter as %22 and everything else (`;`, spaces, UTF-8 é and
        // 日本) as is. That is what the contract requires, byte for byte.
        let onWire = given.replacingOccurrences(of: "\"", with: "%22")
        let disposition = parts.first?["disposition"] as? String ?? ""
        XCTAssertTrue(disposition.contains("filename=\"\(onWire)\""),
                      "Content-Disposition carries filename=\"\(onWire)\": \(disposition)")
        XCTAssertTrue(disposition.contains("name=\"doc\""), disposition)

        // What werkzeug hands the application: 2.2 (Debian bookworm) unquotes the parameter
        // but leaves %22 alone; werkzeug >= 2.3 also decodes %22 back to `"`.
        let parser = manifest["parser"] as? String ?? ""
        let werkzeugDecodesPercent22 = !parser.hasPrefix("werkzeug 2.0") && !parser.hasPrefix("werkzeug 2.1")
            && !parser.hasPrefix("werkzeug 2.2")
        let parsedName = werkzeugDecodesPercent22 ? given : onWire
        try assertParts(manifest, upload: 1, [
            .file(name: "doc", source: source, filename: parsedName, contentType: "text/plain"),
            // Without ;filename= the file's own name is sent, semicolon and all.
            .file(name: "plain", source: source, filename: "odd;path.txt", contentType: "text/plain"),
        ])

        // The job remembers the filename as given, unescaped.
        let job = try cli.job(id)
        let form = job.form ?? []
        XCTAssertEqual(form.first?["filename"] as? String, given, job.jsonText)
        XCTAssertEqual(form.first?["file"] as? String, source.path, job.jsonText)
        XCTAssertEqual(form.last?["filename"] as? String, "odd;path.txt", job.jsonText)
    }

    func testRawPutSendsTheFileWithContentLength() throws {
        let size = 3 * MiB + 5
        let file = try makeUploadFile("raw.bin", size: size)
        let sha = try cli.sha256(of: file)

        let id = try cli.upload(receiver.rawURL("put.bin"), ["-T", file.path])
        try waitCompleted(id)
        let record = try XCTUnwrap(receiver.raw("put.bin"),
                                   "no complete raw record (Content-Length missing or short?): \(receiver.describeLog())")
        XCTAssertEqual(record["method"] as? String, "PUT", "-T uploads PUT by default: \(record)")
        XCTAssertEqual(jsonInt(record["size"]), size, "\(record)")
        XCTAssertEqual(jsonInt(record["contentLength"]), size, "Content-Length was sent: \(record)")
        XCTAssertEqual(record["sha256"] as? String, sha, "\(record)")
        XCTAssertEqual(try cli.sha256(of: receiver.rawFile("put.bin")), sha, "stored bytes")

        let job = try cli.job(id)
        XCTAssertEqual(job.kind, "upload", job.jsonText)
        XCTAssertEqual(job.method, "PUT", job.jsonText)
        XCTAssertEqual(job["path"] as? String, file.path, "path is the raw-body file: \(job.jsonText)")
        XCTAssertTrue(job["form"] is NSNull, "form is null for -T: \(job.jsonText)")
        let body = try assertResponse(job, status: 201)
        XCTAssertEqual(body["stored"] as? String, "put.bin", "\(body)")
        XCTAssertEqual(jsonInt(body["size"]), size, "\(body)")

        // --method POST with -T.
        let posted = try cli.upload(receiver.rawURL("post.bin"), ["-T", file.path, "--method", "POST"])
        try waitCompleted(posted)
        let postRecord = try XCTUnwrap(receiver.raw("post.bin"), receiver.describeLog())
        XCTAssertEqual(postRecord["method"] as? String, "POST", "\(postRecord)")
        XCTAssertEqual(jsonInt(postRecord["contentLength"]), size, "\(postRecord)")
        XCTAssertEqual(postRecord["sha256"] as? String, sha, "\(postRecord)")
        XCTAssertEqual(try cli.job(posted).method, "POST")

        // `list` names the file as what is sent, not as a destination.
        let list = cli.run(["list"])
        XCTAssertTrue(list.stdout.contains("upload of \(file.path) to \(receiver.rawURL("put.bin"))"), list.summary)
        XCTAssertFalse(list.stdout.contains("DESTINATION"), list.summary)
    }

    func testServerErrorFailsWithHTTPStatusAndKeepsTheResponse() throws {
        let file = try makeUploadFile("report.txt", Data("a report\n".utf8))
        let id = try cli.upload(receiver.uploadURL(status: 500), ["-F", "report=@\(file.path)", "--retry", "0"])
        let waited = cli.wait([id], timeout: 20)
        XCTAssertEqual(waited.exitCode, 1, "wait on a failed job exits 1: \(waited.summary)")
        let job = try cli.awaitState(id, "failed", timeout: 5)
        XCTAssertEqual(job.errorCode, "http_status", job.jsonText)
        XCTAssertEqual(job.httpStatus, 500, job.jsonText)
        assertOneLineMessage(job.errorMessage ?? "", "error.message")
        let body = try assertResponse(job, status: 500)
        XCTAssertEqual(jsonInt(body["upload"]), 1, "the receiver's body is kept: \(body)")
        XCTAssertEqual(receiver.requests().filter { $0.path.hasPrefix("/upload") }.count, 1,
                       "--retry 0: one request; \(receiver.describeLog())")
    }

    /// The boundary is persisted with the job: sending again (`retry`) sends the same bytes.
    func testRetrySendsIdenticalBody() throws {
        let file = try makeUploadFile("same.bin", size: 300 * KiB + 1)
        let id = try cli.upload(receiver.uploadURL(status: 503), [
            "-F", "a=b", "-F", "file=@\(file.path)", "--retry", "0",
        ])
        try cli.awaitState(id, "failed", timeout: 20)
        let retry = cli.run(["retry", String(id)])
        XCTAssertEqual(retry.exitCode, 0, retry.summary)
        try cli.awaitJob(id, "failed again after a second attempt") { $0.state == "failed" && $0.attemptLog.count >= 2 }
        let uploads = try receiver.awaitUploads(count: 2)
        XCTAssertEqual(uploads.count, 2, receiver.describeLog())
        guard uploads.count == 2 else { return }
        XCTAssertEqual(uploads[0]["boundary"] as? String, uploads[1]["boundary"] as? String, "same boundary")
        XCTAssertEqual(uploads[0]["bodySha256"] as? String, uploads[1]["bodySha256"] as? String, "identical body bytes")
        XCTAssertEqual(jsonInt(uploads[0]["bodySize"]), jsonInt(uploads[1]["bodySize"]))
        try assertParts(uploads[1], upload: 2, [
            .field(name: "a", value: "b"),
            .file(name: "file", source: file, filename: "same.bin", contentType: "application/octet-stream"),
        ])
    }

    func testMissingFileAndMalformedFormAreUsageErrors() throws {
        let present = try makeUploadFile("present.txt", Data("x".utf8))
        let missing = sources.appendingPathComponent("does-not-exist.bin").path
        let url = receiver.uploadURL()
        let cases: [(String, [String])] = [
            ("missing -F file", ["-F", "f=@\(missing)"]),
            ("missing -F file after a good one", ["-F", "ok=@\(present.path)", "-F", "f=@\(missing)"]),
            ("missing -T file", ["-T", missing]),
            ("directory as -F file", ["-F", "f=@\(sources.path)"]),
            ("-F without =", ["-F", "novalue"]),
            ("-F with an unterminated quote", ["-F", "f=@\"\(present.path)"]),
        ]
        for (what, arguments) in cases {
            let result = cli.run(["upload", url] + arguments)
            XCTAssertEqual(result.exitCode, 2, "\(what): \(result.summary)")
            assertOneLineMessage(result.stderr, what)
            if arguments.contains(where: { $0.contains(missing) }) {
                XCTAssertTrue(result.stderr.contains(missing), "\(what): the message names the file: \(result.summary)")
            }
        }
        if geteuid() != 0 {  // root reads anything
            let locked = try makeUploadFile("locked.txt", Data("secret".utf8))
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: locked.path)
            let result = cli.run(["upload", url, "-F", "f=@\(locked.path)"])
            XCTAssertEqual(result.exitCode, 2, "unreadable file: \(result.summary)")
            assertOneLineMessage(result.stderr, "unreadable file")
        }
        XCTAssertEqual(try cli.jobs().count, 0, "no job is created for a usage error")
        XCTAssertTrue(receiver.requests().isEmpty, receiver.describeLog())
    }
}
