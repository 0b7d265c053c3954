import Foundation

/// `s3_relay.py` in front of an S3 server that does not count what it receives (rclone serve s3,
/// SeaweedFS): clients use `endpoint`, every byte passes untouched, and the relay counts
/// requests, body bytes and error answers per S3 operation the way moto's harness does, so
/// `stats()` means the same for every implementation.
final class S3CountingRelay {
    static let script = PythonServer.script("s3_relay.py")

    let directory: URL
    let target: UInt16
    let logURL: URL
    private(set) var port: UInt16 = 0
    private(set) var controlPort: UInt16 = 0
    private var child: ChildProcess?
    private let runner: CommandRunner

    init(directory: URL, target: UInt16) throws {
        self.directory = directory
        self.target = target
        logURL = directory.appendingPathComponent("s3_relay.log")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        runner = try CommandRunner(scratch: directory.appendingPathComponent("commands"))
    }

    deinit { stop() }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Starts the relay (Debian's python: it needs nothing from PyPI) and waits until its
    /// `ready.json` names the port it was given.
    func start() throws {
        let ready = directory.appendingPathComponent("ready.json")
        try? FileManager.default.removeItem(at: ready)
        var control: Int?
        (child, port) = try PythonServer.launch(
            Self.script, arguments: ["--target", String(target), "--dir", directory.path],
            output: logURL, what: "s3_relay.py", timeout: 15,
            accepts: { port in
                guard let data = try? Data(contentsOf: ready),
                      let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
                      jsonInt(object["port"]) == Int(port) else { return false }
                control = jsonInt(object["controlPort"])
                return Sockets.acceptsConnections(port: port)
            })
        guard let control else { throw HarnessError("s3_relay.py: no control port in ready.json") }
        controlPort = UInt16(control)
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    private func control(_ method: String, _ path: String) throws -> [String: Any] {
        let result = runner.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                ["-sS", "--fail-with-body", "--max-time", "15", "-X", method,
                                 "http://127.0.0.1:\(controlPort)/\(path)"], timeout: 20)
        guard result.exitCode == 0,
              let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        else { throw HarnessError("s3_relay.py /\(path): \(result.summary)\nlog:\n\(log().suffix(3000))") }
        return object
    }

    func stats() throws -> S3Stats {
        S3Stats(json: try control("GET", "stats")["operations"] as? [String: [String: Any]] ?? [:])
    }

    /// Answers by `"OPERATION STATUS"` (`"GetObject 200"`, `"CompleteMultipartUpload 400"`).
    func statuses() throws -> [String: Int] {
        (try control("GET", "stats")["statuses"] as? [String: Any] ?? [:]).compactMapValues { jsonInt($0) }
    }

    func resetStats() throws { _ = try control("POST", "reset-stats") }

    func log() -> String { (try? Data(contentsOf: logURL)).map { String(decoding: $0, as: UTF8.self) } ?? "" }
}

/// A store that counts nothing itself, behind an `S3CountingRelay`: its counters are the
/// relay's, its log its own and the relay's (`RcloneS3Server`, `SeaweedFSServer`).
protocol RelayedS3Server: AnyObject {
    var relay: S3CountingRelay? { get }
    var logURL: URL { get }
}

extension RelayedS3Server {
    func stats() throws -> S3Stats { try requireRelay().stats() }
    func resetStats() throws { try requireRelay().resetStats() }
    /// Answers by `"OPERATION STATUS"`, as the relay saw them.
    func statuses() throws -> [String: Int] { try requireRelay().statuses() }

    private func requireRelay() throws -> S3CountingRelay {
        guard let relay else { throw HarnessError("\(Self.self) not started") }
        return relay
    }

    func log() -> String {
        let own = (try? Data(contentsOf: logURL)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return own + "\n---- relay:\n" + (relay?.log() ?? "")
    }
}
