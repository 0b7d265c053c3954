import Foundation

/// A tus and S3 server that lies (`hostile_session_server.py`, standard library only): tus
/// offsets that never move (`/tus/stuck/`) or run ahead of what was sent (`/tus/ahead/`), and
/// an S3 part list that never ends. `counts()` says what it received.
final class HostileSessionServer {
    static let script = PythonServer.script("hostile_session_server.py")

    let outputURL: URL
    private(set) var port: UInt16 = 0
    private var child: ChildProcess?
    private let runner: CommandRunner

    init(outputURL: URL, scratch: URL) throws {
        self.outputURL = outputURL
        runner = try CommandRunner(scratch: scratch)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// A tus creation URL whose server behaves as `mode` says (`stuck`, `ahead`, `honest`).
    func tus(_ mode: String) -> String { "\(baseURL)/tus/\(mode)/" }

    func start() throws {
        (child, port) = try PythonServer.launch(Self.script, output: outputURL, what: "hostile session server")
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    /// Requests by `"METHOD kind"` (`"PATCH tus"`, `"GET ListParts"`), and the PATCH body bytes read.
    func counts() throws -> (requests: [String: Int], patchBytes: Int) {
        let result = runner.run(FaultServer.curl, ["-sf", "--max-time", "10", baseURL + "/log"], timeout: 15)
        guard result.exitCode == 0, let data = result.stdout.data(using: .utf8),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw HarnessError("hostile session server /log: \(result.summary)")
        }
        return (object["requests"] as? [String: Int] ?? [:], object["patchBytes"] as? Int ?? 0)
    }
}
