import Foundation

/// One upload a tus server holds, finished or not, whichever server it is.
struct TusStoredUpload: Sendable {
    /// The last path segment of its Location.
    let id: String
    /// What HEAD would answer as `Upload-Offset`.
    let offset: Int64
    /// `Upload-Length`; nil while deferred.
    let size: Int64?
    /// The stored bytes (tussi preallocates this file to `size`: its length is not the offset).
    let dataURL: URL
}

/// What a tus test needs of a server, whichever implementation it is (TusImplementation):
/// tuspyserver (`TusServer`) or tussi (`TussiServer`), each under uvicorn on 127.0.0.1 in its own
/// directory, counting what it receives (tus_counting.py).
protocol TusServing: AnyObject {
    /// The creation URL: `http://127.0.0.1:PORT/files/`.
    var endpoint: String { get }
    /// Starts on a free port, or on the previous one with `samePort`; waits until it answers.
    func start(samePort: Bool) throws
    func stop()
    /// Requests per method, PATCH body bytes as the app received them, answers by status.
    func stats() throws -> TusStats
    func resetStats() throws
    /// Every upload the server holds, in progress or finished.
    func storedUploads() throws -> [TusStoredUpload]
    /// SHA-256 of the first `offset` bytes stored for the upload.
    func sha256(of upload: TusStoredUpload) throws -> String
    func log() -> String
}

/// A tus server under uvicorn behind tus_counting.py, whose `/__harness` routes give its
/// counters: read the same way for each (`TusServer`, `TussiServer`).
protocol TusCounting: AnyObject {
    var port: UInt16 { get }
    /// uvicorn's output: an access line per request, tracebacks.
    var logURL: URL { get }
    var runner: CommandRunner { get }
}

extension TusCounting {
    private func harness(_ method: String, _ name: String) throws -> [String: Any] {
        let result = runner.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                ["-sS", "--fail-with-body", "--max-time", "15", "-X", method,
                                 "http://127.0.0.1:\(port)/__harness/\(name)"], timeout: 20)
        guard result.exitCode == 0,
              let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        else { throw HarnessError("the tus server's /__harness/\(name): \(result.summary)\nlog:\n\(log().suffix(3000))") }
        return object
    }

    /// Counters since this server process started (a restart zeroes them) or `resetStats()`.
    func stats() throws -> TusStats {
        let object = try harness("GET", "stats")
        return TusStats(requests: (object["requests"] as? [String: Any] ?? [:]).compactMapValues { jsonInt($0) },
                        patchBytes: Int64(jsonInt(object["patchBytes"]) ?? 0),
                        statuses: (object["statuses"] as? [String: Any] ?? [:]).compactMapValues { jsonInt($0) })
    }

    func resetStats() throws { _ = try harness("POST", "reset-stats") }

    func log() -> String { (try? Data(contentsOf: logURL)).map { String(decoding: $0, as: UTF8.self) } ?? "" }
}
