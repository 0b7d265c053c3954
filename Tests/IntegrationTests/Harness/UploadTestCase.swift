import Foundation
import XCTest

/// Job JSON fields that only uploads have.
extension Dictionary where Key == String, Value == Any {
    var kind: String? { self["kind"] as? String }
    var method: String? { self["method"] as? String }
    /// `form`: `{name, value}` or `{name, file, filename, contentType, size}`; nil for `-T` (null).
    var form: [[String: Any]]? { self["form"] as? [[String: Any]] }
    /// `show --json` only: `{status, headers, body, truncated}` once the server answered.
    var response: [String: Any]? { self["response"] as? [String: Any] }
}

extension CLI {
    /// `upload URL ARGS...`; returns the new job id (human output: the id alone on a line).
    func upload(_ url: String, _ arguments: [String]) throws -> Int {
        let result = run(["upload", url] + arguments)
        guard result.exitCode == 0 else { throw HarnessError("upload failed: \(result.summary)") }
        guard let line = result.trimmedStdout.split(separator: "\n").last,
              let id = Int(line.trimmingCharacters(in: .whitespaces))
        else { throw HarnessError("upload did not print a job id: \(result.summary)") }
        return id
    }
}

/// What one multipart part should look like at the receiver.
enum ExpectedPart {
    case field(name: String, value: String)
    /// `filename` and `contentType` as werkzeug reports them.
    case file(name: String, source: URL, filename: String, contentType: String)
}

/// Base class for upload tests: everything IntegrationTestCase sets up, plus a running
/// upload receiver and a directory of source files.
class UploadTestCase: IntegrationTestCase {
    private(set) var receiver: UploadReceiver!
    /// Files to upload (fresh and empty per test).
    private(set) var sources: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        sources = workDir.appendingPathComponent("sources")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        receiver = try UploadReceiver(directory: workDir.appendingPathComponent("receiver"),
                                      outputURL: workDir.appendingPathComponent("receiver.out"))
        try receiver.start()
    }

    override func tearDownWithError() throws {
        receiver?.stop()
        if let run = testRun, run.totalFailureCount > 0, let receiver {
            print("""
            ---- \(name): upload receiver requests:
            \(receiver.describeLog())
            ----
            """)
        }
        try super.tearDownWithError()
    }

    // MARK: source files

    /// Writes `data` to `sources/<name>` and returns its URL.
    @discardableResult
    func makeUploadFile(_ name: String, _ data: Data) throws -> URL {
        let url = sources.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return url
    }

    /// `sources/<name>` with `size` random bytes.
    @discardableResult
    func makeUploadFile(_ name: String, size: Int) throws -> URL {
        try makeUploadFile(name, Files.randomData(count: size))
    }

    // MARK: assertions

    /// The manifest lists exactly `expected`, in order, with every name, value, filename,
    /// content type, size and sha256 as sent; the kept file bytes have the same sha256.
    func assertParts(_ manifest: [String: Any], upload number: Int, _ expected: [ExpectedPart],
                     file: StaticString = #filePath, line: UInt = #line) throws {
        let parts = manifest["parts"] as? [[String: Any]] ?? []
        let context = "manifest \(number): \(manifest.jsonText)"
        XCTAssertEqual(parts.count, expected.count, "part count; \(context)", file: file, line: line)
        for (index, (part, want)) in zip(parts, expected).enumerated() {
            switch want {
            case .field(let name, let value):
                XCTAssertEqual(part["kind"] as? String, "field", "part \(index) kind; \(context)", file: file, line: line)
                XCTAssertEqual(part["name"] as? String, name, "part \(index) name", file: file, line: line)
                XCTAssertEqual(part["value"] as? String, value, "part \(index) value", file: file, line: line)
                XCTAssertNil(part["contentType"] as? String,
                             "text field \(name) has no Content-Type; \(context)", file: file, line: line)
            case .file(let name, let source, let filename, let contentType):
                XCTAssertEqual(part["kind"] as? String, "file", "part \(index) kind; \(context)", file: file, line: line)
                XCTAssertEqual(part["name"] as? String, name, "part \(index) name", file: file, line: line)
                XCTAssertEqual(part["filename"] as? String, filename, "part \(index) filename; \(context)",
                               file: file, line: line)
                XCTAssertEqual(part["contentType"] as? String, contentType, "part \(index) content type",
                               file: file, line: line)
                XCTAssertEqual(jsonInt(part["size"]), Files.size(source), "part \(index) size", file: file, line: line)
                let sha = try cli.sha256(of: source)
                XCTAssertEqual(part["sha256"] as? String, sha, "part \(index) sha256 (\(name))", file: file, line: line)
                let kept = receiver.partFile(upload: number, index: index)
                XCTAssertEqual(try cli.sha256(of: kept), sha, "part \(index) bytes kept by the receiver",
                               file: file, line: line)
            }
        }
    }

    /// The job's `form` describes `expected` (file paths, filenames as given, types, sizes).
    func assertForm(_ job: JobJSON, _ expected: [ExpectedPart], filenames: [String: String] = [:],
                    file: StaticString = #filePath, line: UInt = #line) {
        let form = job.form ?? []
        XCTAssertEqual(form.count, expected.count, "form: \(job.jsonText)", file: file, line: line)
        for (entry, want) in zip(form, expected) {
            switch want {
            case .field(let name, let value):
                XCTAssertEqual(entry["name"] as? String, name, "form entry: \(entry)", file: file, line: line)
                XCTAssertEqual(entry["value"] as? String, value, "form entry: \(entry)", file: file, line: line)
                XCTAssertNil(entry["file"] as? String, "a text field has no file: \(entry)", file: file, line: line)
            case .file(let name, let source, let filename, let contentType):
                XCTAssertEqual(entry["name"] as? String, name, "form entry: \(entry)", file: file, line: line)
                XCTAssertEqual(entry["file"] as? String, source.path, "form entry: \(entry)", file: file, line: line)
                XCTAssertEqual(entry["filename"] as? String, filenames[name] ?? filename, "form entry: \(entry)",
                               file: file, line: line)
                XCTAssertEqual(entry["contentType"] as? String, contentType, "form entry: \(entry)", file: file, line: line)
                XCTAssertEqual(jsonInt(entry["size"]), Files.size(source), "form entry: \(entry)", file: file, line: line)
            }
        }
    }

    /// `response` of a job the server answered: status and the receiver's JSON body.
    @discardableResult
    func assertResponse(_ job: JobJSON, status: Int,
                        file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let response = try XCTUnwrap(job.response, "response once answered: \(job.jsonText)", file: file, line: line)
        XCTAssertEqual(jsonInt(response["status"]), status, "response.status: \(job.jsonText)", file: file, line: line)
        XCTAssertEqual(response["truncated"] as? Bool, false, "a short body is not truncated: \(job.jsonText)",
                       file: file, line: line)
        let headers = response["headers"] as? [String] ?? []
        XCTAssertTrue(headers.contains { $0.lowercased().hasPrefix("content-type:") && $0.contains("application/json") },
                      "response.headers holds the receiver's Content-Type: \(headers)", file: file, line: line)
        let text = try XCTUnwrap(response["body"] as? String, "response.body: \(job.jsonText)", file: file, line: line)
        let body = try XCTUnwrap(
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
            "response.body is the receiver's JSON: \(text)", file: file, line: line)
        return body
    }

    /// Waits until the job is running and has sent `minBytes` without having finished.
    @discardableResult
    func awaitUploadProgress(_ id: Int, atLeast minBytes: Int, timeout: TimeInterval = 20) throws -> JobJSON {
        try cli.awaitJob(id, "running with bytesDone >= \(minBytes), not finished", timeout: timeout) { job in
            guard job.state == "running", let done = job.bytesDone, done >= minBytes else { return false }
            return job.bytesTotal.map { done < $0 } ?? true
        }
    }
}
