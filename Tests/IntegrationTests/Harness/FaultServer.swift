import Foundation

/// The fault-injection server: `fault_server.py` (next to this file) run by
/// /usr/bin/python3, standard library only. See the script's docstring for the routes and
/// the faults (`drop`, `status`/`retry_after`, `stall`, `short`, `change_after`,
/// `ignore_range`, `rate`, each limited to the first `times` GETs of a name; `drop`, `status`
/// and `stall` also for uploads to `/upload/<name>`).
final class FaultServer {
    static let script = PythonServer.script("fault_server.py")
    static let curl = URL(fileURLWithPath: "/usr/bin/curl")

    /// The server's own stdout/stderr (access lines, tracebacks).
    let outputURL: URL
    private(set) var port: UInt16 = 0
    private var child: ChildProcess?
    private let runner: CommandRunner

    init(outputURL: URL, scratch: URL) throws {
        self.outputURL = outputURL
        runner = try CommandRunner(scratch: scratch)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `/files/<name>?size=N&<query>`; `query` is e.g. `["drop": "524288", "times": "1"]`.
    func url(_ name: String, size: Int, _ query: KeyValuePairs<String, String> = [:]) -> String {
        let items = ["size=\(size)"] + query.map { "\($0.key)=\($0.value)" }
        return "\(baseURL)/files/\(name)?" + items.joined(separator: "&")
    }

    /// Starts the server on a free port and waits until it accepts connections.
    func start() throws {
        (child, port) = try PythonServer.launch(Self.script, output: outputURL, what: "fault server")
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    // MARK: queries (not counted as file requests, no faults)

    private func getJSON(_ path: String) throws -> Any {
        let result = runner.run(Self.curl, ["-sf", "--max-time", "10", baseURL + path], timeout: 15)
        guard result.exitCode == 0, let data = result.stdout.data(using: .utf8),
              let value = try? JSONSerialization.jsonObject(with: data)
        else { throw HarnessError("fault server \(path): \(result.summary)") }
        return value
    }

    /// SHA-256 of the entity `name` (version 1, or 2 after `change_after`) of `size` bytes.
    func sha256(_ name: String, size: Int, version: Int = 1) throws -> String {
        let doc = try getJSON("/sha256/\(name)?size=\(size)&version=\(version)") as? [String: Any]
        guard let hex = doc?["sha256"] as? String else { throw HarnessError("no sha256 for \(name)") }
        return hex
    }

    /// Every request served so far (`n, method, name, query, range, ifRange, status,
    /// bytesSent, contentLength, version, fault, clientClosed?`).
    func log() throws -> [[String: Any]] {
        guard let list = try getJSON("/log") as? [[String: Any]] else { throw HarnessError("/log is not a list") }
        return list
    }

    /// Requests to `/upload/<name>`, in arrival order (`n, method, contentLength, bytesReceived,
    /// complete, status, fault, sha256, idempotencyKey`).
    func uploads(_ name: String) throws -> [[String: Any]] {
        try log().filter { $0["path"] as? String == "/upload/\(name)" }
    }

    /// GETs of `/files/<name>`, in arrival order.
    func gets(_ name: String) -> [[String: Any]] {
        ((try? log()) ?? []).filter { $0["name"] as? String == name && $0["method"] as? String == "GET" }
    }

    /// Waits until at least `count` GETs of `name` were logged.
    @discardableResult
    func awaitGets(_ name: String, count: Int, timeout: TimeInterval = 10) -> [[String: Any]] {
        var found: [[String: Any]] = []
        poll(timeout: timeout, interval: 0.1) {
            found = gets(name)
            return found.count >= count
        }
        return found
    }

    /// `/redirect?to=TARGET`: answered `status` with `Location: TARGET`.
    func redirectURL(to target: String, status: Int = 302) -> String {
        "\(baseURL)/redirect?to=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target)&status=\(status)"
    }

    /// The headers of each request logged for `path` (`/redirect`, `/files/NAME`), in order,
    /// by lower-cased name.
    func requestHeaders(_ path: String) -> [[String: String]] {
        ((try? log()) ?? []).filter { $0["path"] as? String == path }.map { entry in
            let headers = entry["headers"] as? [String: String] ?? [:]
            return Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        }
    }

    func describeLog() -> String {
        let entries = ((try? log()) ?? []).map { entry -> String in
            let keys = ["n", "method", "path", "query", "range", "ifRange", "status", "location", "bytesSent",
                        "contentLength", "version", "fault", "clientClosed"]
            return keys.compactMap { key in entry[key].flatMap { $0 is NSNull ? nil : "\(key)=\($0)" } }
                .joined(separator: " ")
        }
        return (entries.isEmpty ? "(no requests)" : entries.joined(separator: "\n"))
            + "\n-- fault server output (tail):\n\(outputTail())"
    }

    private func outputTail() -> String {
        let output = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return output.split(separator: "\n", omittingEmptySubsequences: false).suffix(30).joined(separator: "\n")
    }
}
