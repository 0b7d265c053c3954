import Foundation

/// One request as recorded in the receiver's `requests.log`.
struct ReceiverRequest {
    let method: String
    /// Path with its query string.
    let path: String
    /// The request's Content-Length, nil when absent (chunked).
    let contentLength: Int?
    /// Body bytes the receiver actually read.
    let bytesRead: Int
    let status: Int
}

/// The upload test server: `upload_receiver.py` (next to this file) run by /usr/bin/python3
/// with Debian's python3-werkzeug, so multipart bodies are parsed by a real third-party
/// parser. See the script's docstring for the routes:
/// - `POST /upload[?status=N][&slow=1]` → `DIR/<n>/manifest.json` per completely received,
///   parsed request, file parts kept as `DIR/<n>/<index>.bin`
/// - `PUT|POST /raw/<name>` → `DIR/raw/<name>` and, when Content-Length matched,
///   `DIR/raw/<name>.json`
/// - every request logged to `DIR/requests.log`
final class UploadReceiver {
    static let script = PythonServer.script("upload_receiver.py")

    /// Where manifests, raw bodies and the request log go.
    let directory: URL
    /// The receiver's own stdout/stderr (werkzeug's access lines, tracebacks).
    let outputURL: URL
    private(set) var port: UInt16 = 0
    private var child: ChildProcess?

    init(directory: URL, outputURL: URL) throws {
        self.directory = directory
        self.outputURL = outputURL
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `/upload` with the optional `status` and `slow` query parameters.
    func uploadURL(status: Int? = nil, slow: Bool = false) -> String {
        var query: [String] = []
        if let status { query.append("status=\(status)") }
        if slow { query.append("slow=1") }
        return "\(baseURL)/upload" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    /// `/raw/<name>` (name must be URL-safe; the tests use plain ASCII names).
    func rawURL(_ name: String, slow: Bool = false) -> String {
        "\(baseURL)/raw/\(name)" + (slow ? "?slow=1" : "")
    }

    /// Starts the receiver on a free port and waits until it accepts connections.
    func start() throws {
        (child, port) = try PythonServer.launch(
            Self.script, arguments: ["--dir", directory.path], output: outputURL,
            what: "upload receiver (is python3-werkzeug installed?)",
            hopeless: { $0.contains("No module named") })  // werkzeug missing: no point retrying
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    // MARK: manifests

    /// Every manifest, ordered by upload number.
    func uploads() -> [[String: Any]] {
        let numbers = Files.contents(of: directory).compactMap { Int($0) }.sorted()
        return numbers.compactMap { manifest($0) }
    }

    /// `DIR/<n>/manifest.json`, nil when absent.
    func manifest(_ number: Int) -> [String: Any]? {
        readJSON(directory.appendingPathComponent("\(number)/manifest.json"))
    }

    /// The bytes kept for part `index` (a file part) of upload `number`.
    func partFile(upload number: Int, index: Int) -> URL {
        directory.appendingPathComponent("\(number)/\(index).bin")
    }

    /// `DIR/raw/<name>.json` (`size, sha256, method, contentLength`), nil when absent.
    func raw(_ name: String) -> [String: Any]? {
        readJSON(directory.appendingPathComponent("raw/\(name).json"))
    }

    /// The stored body of `/raw/<name>`.
    func rawFile(_ name: String) -> URL { directory.appendingPathComponent("raw/\(name)") }

    /// Waits until at least `count` manifests exist; throws with the request log on timeout.
    @discardableResult
    func awaitUploads(count: Int, timeout: TimeInterval = 10) throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        let held = poll(timeout: timeout) {
            found = uploads()
            return found.count >= count
        }
        guard held else {
            throw HarnessError("receiver: \(found.count) of \(count) uploads after \(timeout)s; "
                + "requests:\n\(describeLog())")
        }
        return found
    }

    // MARK: request log

    func requests() -> [ReceiverRequest] {
        let url = directory.appendingPathComponent("requests.log")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 5, let read = Int(fields[3]), let status = Int(fields[4]) else { return nil }
            return ReceiverRequest(method: fields[0], path: fields[1], contentLength: Int(fields[2]),
                                   bytesRead: read, status: status)
        }
    }

    /// Waits until the log holds at least `count` requests matching `predicate`.
    @discardableResult
    func awaitRequests(count: Int, timeout: TimeInterval = 10,
                       where predicate: (ReceiverRequest) -> Bool = { _ in true }) -> [ReceiverRequest] {
        poll(timeout: timeout) { requests().filter(predicate).count >= count }
        return requests().filter(predicate)
    }

    func describeLog() -> String {
        let log = (try? String(contentsOf: directory.appendingPathComponent("requests.log"), encoding: .utf8))
            ?? "(no requests)"
        let output = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        let tail = output.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
        return "\(log)\n-- receiver output (tail):\n\(tail)"
    }

    private func readJSON(_ url: URL) -> [String: Any]? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}
