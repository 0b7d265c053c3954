import Foundation

/// One upload as tuspyserver keeps it: `files/<id>` (the bytes) and `files/<id>.info` (JSON).
struct TusUpload: Sendable {
    /// 32 lowercase hex digits: the last path segment of the Location.
    let id: String
    /// The sidecar's offset: what HEAD answers as `Upload-Offset`.
    let offset: Int64
    /// `Upload-Length`; nil while deferred.
    let size: Int64?
    /// Decoded `Upload-Metadata` (`filename`, `filetype`, ...).
    let metadata: [String: String]
    /// RFC 7231 date (`Sat, 05 Dec 2026 23:47:58 GMT`), set at creation to now + days to keep.
    let expires: String?
    /// The data file. Its length can exceed `offset` (see TusServer).
    let dataURL: URL
    let dataSize: Int64
}

/// What the tus server received since start (or `resetStats()`).
struct TusStats: Sendable {
    /// Requests per method (`POST`, `PATCH`, `HEAD`, `DELETE`, `OPTIONS`, ...).
    let requests: [String: Int]
    /// Body bytes of every PATCH as the app received them (a client killed mid-body counts what
    /// arrived before uvicorn saw the disconnect).
    let patchBytes: Int64
    /// Answers by `"METHOD STATUS"` (`"PATCH 204"`, `"HEAD 410"`).
    let statuses: [String: Int]

    func requests(_ method: String) -> Int { requests[method] ?? 0 }
    func answers(_ method: String, _ status: Int) -> Int { statuses["\(method) \(status)"] ?? 0 }
}

/// A real tus 1.0 server for the tests: tuspyserver (PyPI, in the test venv) as a FastAPI router
/// under uvicorn, run by `tus_server.py` next to this file on 127.0.0.1, storing in
/// `directory/files`. It stores on disk, so `restart()` (stop, then start on the same port and
/// storage) is a server that went away and came back with every upload intact.
///
/// What tuspyserver (4.4.3) does, which the engine has to live with:
/// - HEAD of an upload answers 400 unless it was created with `Upload-Metadata` holding both
///   `filename` and `filetype` (base64 values, `filename <b64>,filetype <b64>`): the engine must
///   send both. HEAD also sends `Content-Length: <Upload-Length>` (no body).
/// - `Location` is absolute, built from the request's Host: `http://127.0.0.1:PORT/files/<id>`.
/// - `Tus-Extension: creation,creation-defer-length,creation-with-upload,expiration,termination,
///   concatenation`; `Upload-Expires` on POST and PATCH; every request but OPTIONS needs
///   `Tus-Resumable: 1.0.0` (else 412); PATCH needs `Content-Type: application/offset+octet-stream`
///   (else 415) and `Upload-Offset` equal to the stored offset (else 409).
/// - A PATCH whose client disconnects mid-body keeps what arrived: the offset advances by it.
/// - A PATCH that goes past `Upload-Length` gets 400, but the chunks it had already appended stay
///   in the data file while the offset does not move: the data file is then longer than the
///   offset and a later PATCH appends after that garbage (a corrupt upload). Never send more.
/// - An expired upload (sidecar `expires` in the past) answers HEAD/PATCH/DELETE 410; a removed
///   one 404.
final class TusServer {
    static let script = PythonServer.script("tus_server.py")

    let directory: URL
    /// Where tuspyserver keeps the uploads.
    let filesDirectory: URL
    let logURL: URL
    let daysToKeep: Int
    private(set) var port: UInt16 = 0
    private var child: ChildProcess?
    let runner: CommandRunner

    init(directory: URL, daysToKeep: Int = 5) throws {
        self.directory = directory
        self.daysToKeep = daysToKeep
        filesDirectory = directory.appendingPathComponent("files")
        logURL = directory.appendingPathComponent("tus_server.log")
        try FileManager.default.createDirectory(at: filesDirectory, withIntermediateDirectories: true)
        runner = try CommandRunner(scratch: directory.appendingPathComponent("commands"))
    }

    deinit { stop() }

    /// The creation URL: `http://127.0.0.1:PORT/files/`.
    var endpoint: String { "http://127.0.0.1:\(port)/files/" }

    /// The upload URL the server's Location names for `id`.
    func url(of id: String) -> String { endpoint + id }

    /// Starts on a free port, or on the previous one with `samePort` (after `stop()`); waits
    /// until it accepts connections.
    func start(samePort: Bool = false) throws {
        guard child == nil else { throw HarnessError("TusServer already started") }
        let python = try TestVenv.python()
        let arguments = ["--dir", directory.path, "--days-to-keep", String(daysToKeep)]
        guard samePort, port != 0 else {
            (child, port) = try PythonServer.launch(
                Self.script, arguments: arguments, output: logURL, what: "tuspyserver (tus_server.py)",
                python: python.path, timeout: 30, hopeless: { $0.contains("No module named") })
            return
        }
        var lastLog = ""
        for _ in 0..<3 {  // the port just closed: a retry covers a slow release
            let process = try ChildProcess(executable: python,
                                           arguments: ["-u", Self.script.path, "--port", String(port)] + arguments,
                                           stdoutURL: logURL, stderrURL: logURL, append: true)
            let up = poll(timeout: 30) { !process.isRunning || Sockets.acceptsConnections(port: port) }
            if up && process.isRunning {
                child = process
                return
            }
            process.stop()
            lastLog = log()
            Thread.sleep(forTimeInterval: 0.5)
        }
        throw HarnessError("tuspyserver did not start again on port \(port): \(lastLog.suffix(2000))")
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    /// Stops and starts again on the same port and storage.
    func restart() throws {
        stop()
        try start(samePort: true)
    }

    // MARK: storage

    private func sidecar(_ id: String) -> URL { filesDirectory.appendingPathComponent("\(id).info") }

    /// Every upload with a readable sidecar, by id.
    func uploads() throws -> [TusUpload] {
        try FileManager.default.contentsOfDirectory(atPath: filesDirectory.path)
            .filter { $0.count == 32 && $0.allSatisfy(\.isHexDigit) }
            .sorted()
            .compactMap { try upload($0) }
    }

    /// The upload `id`, nil when its sidecar is gone.
    func upload(_ id: String) throws -> TusUpload? {
        guard let data = try? Data(contentsOf: sidecar(id)) else { return nil }
        guard let info = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw HarnessError("tus sidecar \(id).info is not JSON: \(String(decoding: data, as: UTF8.self))")
        }
        let dataURL = filesDirectory.appendingPathComponent(id)
        return TusUpload(id: id, offset: Int64(jsonInt(info["offset"]) ?? 0), size: jsonInt(info["size"]).map(Int64.init),
                         metadata: (info["metadata"] as? [String: String]) ?? [:], expires: info["expires"] as? String,
                         dataURL: dataURL, dataSize: Int64(Files.size(dataURL) ?? 0))
    }

    /// The bytes stored for `id`, nil when there is no data file.
    func data(of id: String) throws -> Data? {
        let url = filesDirectory.appendingPathComponent(id)
        return Files.exists(url) ? try Data(contentsOf: url) : nil
    }

    /// SHA-256 of the stored bytes (sha256sum).
    func sha256(of id: String) throws -> String {
        try Files.sha256(of: filesDirectory.appendingPathComponent(id), using: runner)
    }

    /// Sets the sidecar's `expires` to a day in the past (atomically, as tuspyserver writes
    /// it): HEAD, PATCH and DELETE then answer 410.
    func expire(_ id: String) throws {
        let url = sidecar(id)
        guard var info = (try? JSONSerialization.jsonObject(with: Data(contentsOf: url))) as? [String: Any] else {
            throw HarnessError("no tus upload \(id)")
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        info["expires"] = formatter.string(from: Date().addingTimeInterval(-86_400))
        let temporary = url.appendingPathExtension("harness")
        try JSONSerialization.data(withJSONObject: info, options: [.prettyPrinted]).write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else { throw HarnessError("rename \(url.path): errno \(errno)") }
    }

    /// Deletes the upload's data and sidecar: HEAD and PATCH then answer 404.
    func remove(_ id: String) throws {
        let fm = FileManager.default
        guard Files.exists(sidecar(id)) || Files.exists(filesDirectory.appendingPathComponent(id)) else {
            throw HarnessError("no tus upload \(id)")
        }
        for url in [filesDirectory.appendingPathComponent(id), sidecar(id)] where fm.fileExists(atPath: url.path) {
            try fm.removeItem(at: url)
        }
    }
}

extension TusServer: TusServing, TusCounting {
    func storedUploads() throws -> [TusStoredUpload] {
        try uploads().map { TusStoredUpload(id: $0.id, offset: $0.offset, size: $0.size, dataURL: $0.dataURL) }
    }

    /// tuspyserver's data file holds exactly what it acknowledged (see above): its whole SHA-256.
    func sha256(of upload: TusStoredUpload) throws -> String { try sha256(of: upload.id) }
}
