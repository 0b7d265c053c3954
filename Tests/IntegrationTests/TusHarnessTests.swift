import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The tus harness itself (tuspyserver under uvicorn, its storage helpers and stats), driven by
/// the real curl binary: no transferd involved.
final class TusHarnessTests: ServerHarnessTestCase {
    private var tus: TusServer!

    override class var workPrefix: String { "tdtus" }
    override var serverLog: (name: String, text: String)? { tus.map { ("tus server", $0.log()) } }

    override func setUpWithError() throws {
        try super.setUpWithError()
        tus = try TusServer(directory: workDir.appendingPathComponent("tus"))
        try tus.start()
    }

    override func tearDownWithError() throws {
        tus?.stop()
        try super.tearDownWithError()
    }

    private func tusRequest(_ arguments: [String]) -> CurlExchange {
        CurlExchange.run(["-H", "Tus-Resumable: 1.0.0"] + arguments, runner: runner)
    }

    /// POST with Upload-Length and the metadata tuspyserver needs; the upload's URL and id.
    private func create(length: Int, filename: String = "f.bin") throws -> (url: String, id: String) {
        let metadata = "filename \(Data(filename.utf8).base64EncodedString()),"
            + "filetype \(Data("application/octet-stream".utf8).base64EncodedString())"
        let post = tusRequest(["-X", "POST", "-H", "Upload-Length: \(length)", "-H", "Upload-Metadata: \(metadata)", tus.endpoint])
        XCTAssertEqual(post.status, 201, post.summary)
        let location = try XCTUnwrap(post.headers["location"], post.summary)
        XCTAssertTrue(location.hasPrefix(tus.endpoint), "Location \(location) is not under \(tus.endpoint)")
        return (location, String(location.dropFirst(tus.endpoint.count)))
    }

    /// PATCH the bytes of `file` from `from` (to its end, or `count` of them) at `offset`.
    private func patch(_ url: String, offset: Int, file: URL, from: Int = 0, count: Int? = nil) throws -> CurlExchange {
        let all = try Data(contentsOf: file)
        let slice = all[from..<(count.map { from + $0 } ?? all.count)]
        let body = workDir.appendingPathComponent("patch-\(offset).bin")
        try slice.write(to: body)
        return tusRequest(["-X", "PATCH", "-H", "Upload-Offset: \(offset)", "-H", "Content-Type: application/offset+octet-stream",
                           "--data-binary", "@\(body.path)", url])
    }

    private func headOffset(_ url: String) -> Int? {
        Int(tusRequest(["-I", url]).headers["upload-offset"] ?? "")
    }

    func testCreatePatchHeadAndStats() throws {
        let options = CurlExchange.run(["-X", "OPTIONS", tus.endpoint], runner: runner)
        XCTAssertEqual(options.status, 204, options.summary)
        let extensions = Set((options.headers["tus-extension"] ?? "").split(separator: ",").map(String.init))
        XCTAssertTrue(extensions.isSuperset(of: ["creation", "termination", "expiration"]), "\(extensions)")
        XCTAssertEqual(options.headers["tus-version"], "1.0.0")

        let file = try source("a.bin", size: 3 * MiB + 1)
        let (url, id) = try create(length: 3 * MiB + 1, filename: "a.bin")
        XCTAssertEqual(id.count, 32)
        let first = try patch(url, offset: 0, file: file, count: 2 * MiB)
        XCTAssertEqual(first.status, 204, first.summary)
        XCTAssertEqual(first.headers["upload-offset"], String(2 * MiB))
        let head = tusRequest(["-I", url])
        XCTAssertEqual(head.status, 200, head.summary)
        XCTAssertEqual(head.headers["upload-offset"], String(2 * MiB))
        XCTAssertEqual(head.headers["upload-length"], String(3 * MiB + 1))

        let wrongOffset = try patch(url, offset: 5, file: file, from: 5)
        XCTAssertEqual(wrongOffset.status, 409, wrongOffset.summary)

        let upload = try XCTUnwrap(try tus.uploads().first)
        XCTAssertEqual(upload.id, id)
        XCTAssertEqual(upload.offset, Int64(2 * MiB))
        XCTAssertEqual(upload.size, Int64(3 * MiB + 1))
        XCTAssertEqual(upload.metadata, ["filename": "a.bin", "filetype": "application/octet-stream"])

        let rest = try patch(url, offset: 2 * MiB, file: file, from: 2 * MiB)
        XCTAssertEqual(rest.status, 204, rest.summary)
        XCTAssertEqual(headOffset(url), 3 * MiB + 1)
        XCTAssertEqual(try tus.sha256(of: id), try Files.sha256(of: file, using: runner))
        XCTAssertEqual(try tus.data(of: id), try Data(contentsOf: file))

        let stats = try tus.stats()
        XCTAssertEqual(stats.patchBytes, Int64(3 * MiB + 1), "tuspyserver refuses a wrong offset before reading the body")
        XCTAssertEqual(stats.requests("PATCH"), 3)
        XCTAssertEqual(stats.requests("POST"), 1)
        XCTAssertEqual(stats.answers("PATCH", 409), 1)
        XCTAssertEqual(stats.answers("PATCH", 204), 2)
    }

    func testHeadNeedsFilenameAndFiletype() throws {
        let post = tusRequest(["-X", "POST", "-H", "Upload-Length: 10", tus.endpoint])
        XCTAssertEqual(post.status, 201, post.summary)
        let head = tusRequest(["-I", try XCTUnwrap(post.headers["location"])])
        XCTAssertEqual(head.status, 400, "tuspyserver's HEAD without filename/filetype metadata: \(head.summary)")
    }

    func testPatchKilledMidBodyKeepsWhatArrived() throws {
        let file = try source("a.bin", size: 8 * MiB)
        let (url, id) = try create(length: 8 * MiB)
        XCTAssertEqual(try patch(url, offset: 0, file: file, count: MiB).status, 204)
        try tus.resetStats()

        let rest = workDir.appendingPathComponent("rest.bin")
        try Data(contentsOf: file)[MiB...].write(to: rest)
        let output = workDir.appendingPathComponent("slow.out")
        let slow = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/curl"),
            arguments: ["-sS", "--max-time", "60", "--limit-rate", "1M", "-X", "PATCH", "-H", "Tus-Resumable: 1.0.0",
                        "-H", "Upload-Offset: \(MiB)", "-H", "Content-Type: application/offset+octet-stream",
                        "--data-binary", "@\(rest.path)", url],
            stdoutURL: output, stderrURL: output)
        defer { slow.stop(grace: 1) }
        XCTAssertTrue(poll(timeout: 20) { ((try? tus.stats().patchBytes) ?? 0) >= Int64(MiB) },
                      "the server never received 1 MiB of the slow PATCH")
        slow.send(signal: SIGKILL)
        XCTAssertNotNil(slow.waitForExit(timeout: 10))

        var offset = MiB
        XCTAssertTrue(poll(timeout: 10) {
            offset = headOffset(url) ?? MiB
            return offset > MiB
        }, "HEAD still answers the offset before the killed PATCH")
        XCTAssertLessThan(offset, 8 * MiB)
        let received = try tus.stats().patchBytes
        XCTAssertEqual(Int64(offset - MiB), received, "the offset moved by what the server received")
        let upload = try XCTUnwrap(try tus.upload(id))
        XCTAssertEqual(upload.dataSize, Int64(offset), "data file and offset disagree")

        let finish = try patch(url, offset: offset, file: file, from: offset)
        XCTAssertEqual(finish.status, 204, finish.summary)
        XCTAssertEqual(try tus.sha256(of: id), try Files.sha256(of: file, using: runner))
    }

    func testRestartKeepsUploadsOnTheSamePort() throws {
        let file = try source("a.bin", size: 2 * MiB)
        let (url, id) = try create(length: 2 * MiB)
        XCTAssertEqual(try patch(url, offset: 0, file: file, count: MiB).status, 204)
        let port = tus.port

        tus.stop()
        XCTAssertFalse(Sockets.acceptsConnections(port: port), "still listening after stop()")
        XCTAssertEqual(tusRequest(["-I", url]).result.exitCode, 7, "curl should fail to connect")
        try tus.start(samePort: true)
        XCTAssertEqual(tus.port, port)
        XCTAssertEqual(headOffset(url), MiB)

        try tus.restart()
        XCTAssertEqual(tus.port, port)
        XCTAssertEqual(try patch(url, offset: MiB, file: file, from: MiB).status, 204)
        XCTAssertEqual(try tus.sha256(of: id), try Files.sha256(of: file, using: runner))
    }

    func testExpiredAnswers410AndRemovedOrDeleted404() throws {
        let file = try source("a.bin", size: 64 * KiB)
        let expired = try create(length: 64 * KiB)
        XCTAssertEqual(try patch(expired.url, offset: 0, file: file, count: KiB).status, 204)
        try tus.expire(expired.id)
        XCTAssertEqual(tusRequest(["-I", expired.url]).status, 410)
        XCTAssertEqual(try patch(expired.url, offset: KiB, file: file, from: KiB).status, 410)

        let removed = try create(length: 64 * KiB)
        try tus.remove(removed.id)
        XCTAssertEqual(tusRequest(["-I", removed.url]).status, 404)
        XCTAssertEqual(try patch(removed.url, offset: 0, file: file).status, 404)

        let deleted = try create(length: 64 * KiB)
        let delete = tusRequest(["-X", "DELETE", deleted.url])
        XCTAssertEqual(delete.status, 204, delete.summary)
        XCTAssertEqual(tusRequest(["-I", deleted.url]).status, 404)
        XCTAssertEqual(try tus.uploads().map(\.id), [expired.id])
        XCTAssertEqual(try tus.stats().answers("DELETE", 204), 1)
    }

    /// tuspyserver refuses a PATCH past Upload-Length with 400 and leaves the offset, but keeps
    /// the chunks it had appended: the data file outgrows the offset.
    func testPatchPastTheLengthIsRefused() throws {
        let file = try source("a.bin", size: 3 * MiB)
        let (url, id) = try create(length: MiB)
        let over = try patch(url, offset: 0, file: file)
        XCTAssertEqual(over.status, 400, over.summary)
        XCTAssertEqual(headOffset(url), 0)
        let upload = try XCTUnwrap(try tus.upload(id))
        XCTAssertEqual(upload.offset, 0)
        // The chunks before the one that would overflow were appended (about 1 MiB measured):
        // a later PATCH at offset 0 would append after them. The engine must never send more.
        XCTAssertGreaterThan(upload.dataSize, upload.offset, "tuspyserver no longer keeps a refused PATCH's chunks")
    }
}
