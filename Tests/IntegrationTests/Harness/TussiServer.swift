import Foundation

/// tussi 3.1.0 (PyPI, in the test venv), an ASGI tus 1.0 server, run by `tussi_server.py` next to
/// this file under uvicorn on 127.0.0.1 with its default limits kept: a PATCH over 10 MiB gets 413,
/// OPTIONS offers `Tus-Extension: creation` alone (DELETE gets 405) and no `Tus-Max-Size`.
///
/// It stores on disk: `uploads/<uuid>` (preallocated to Upload-Length) with `uploads/<uuid>.meta`
/// (JSON: `length`, `offset`, `metadata`) while in progress, moved to `completed/` once the offset
/// reaches the length. It buffers a PATCH whole before writing it, so a PATCH cut off mid-body
/// leaves the offset where it was. Upload ids are UUIDs; `filename` metadata must be printable ASCII.
final class TussiServer: TusServing, TusCounting {
    static let script = PythonServer.script("tussi_server.py")

    let directory: URL
    let logURL: URL
    private(set) var port: UInt16 = 0
    private var child: ChildProcess?
    let runner: CommandRunner

    init(directory: URL) throws {
        self.directory = directory
        logURL = directory.appendingPathComponent("tussi_server.log")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        runner = try CommandRunner(scratch: directory.appendingPathComponent("commands"))
    }

    deinit { stop() }

    var endpoint: String { "http://127.0.0.1:\(port)/files/" }

    func start(samePort: Bool = false) throws {
        guard child == nil else { throw HarnessError("TussiServer already started") }
        let python = try TestVenv.python()
        let arguments = ["--dir", directory.path]
        guard samePort, port != 0 else {
            (child, port) = try PythonServer.launch(Self.script, arguments: arguments, output: logURL, what: "tussi (tussi_server.py)",
                                                    python: python.path, timeout: 30, hopeless: { $0.contains("No module named") })
            return
        }
        for _ in 0..<3 where child == nil {  // the port just closed: a retry covers a slow release
            let process = try ChildProcess(executable: python, arguments: ["-u", Self.script.path, "--port", String(port)] + arguments,
                                           stdoutURL: logURL, stderrURL: logURL, append: true)
            if poll(timeout: 30, { !process.isRunning || Sockets.acceptsConnections(port: port) }) && process.isRunning {
                child = process
            } else {
                process.stop()
            }
        }
        guard child != nil else { throw HarnessError("tussi did not start again on port \(port): \(log().suffix(2000))") }
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    func storedUploads() throws -> [TusStoredUpload] {
        var found: [TusStoredUpload] = []
        for folder in ["uploads", "completed"] {
            let dir = directory.appendingPathComponent(folder)
            for name in Files.contents(of: dir) where name.hasSuffix(".meta") {
                let id = String(name.dropLast(".meta".count))
                let data = try Data(contentsOf: dir.appendingPathComponent(name))
                guard let record = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                    throw HarnessError("tussi record \(folder)/\(name) is not JSON: \(String(decoding: data, as: UTF8.self))")
                }
                found.append(TusStoredUpload(id: id, offset: Int64(jsonInt(record["offset"]) ?? 0),
                                             size: jsonInt(record["length"]).map(Int64.init), dataURL: dir.appendingPathComponent(id)))
            }
        }
        return found.sorted { $0.id < $1.id }
    }

    /// The data file is preallocated to the upload's length: hash its first `offset` bytes.
    func sha256(of upload: TusStoredUpload) throws -> String {
        let result = runner.run(URL(fileURLWithPath: "/bin/sh"),
                                ["-c", "head -c \(upload.offset) \"$0\" | sha256sum", upload.dataURL.path], timeout: 60)
        guard result.exitCode == 0, let digest = result.stdout.split(separator: " ").first, digest.count == 64 else {
            throw HarnessError("sha256 of \(upload.dataURL.path): \(result.summary)")
        }
        return String(digest)
    }

}
