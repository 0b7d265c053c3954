import Foundation

/// Starts one of the harness's Python servers (a script next to this file, run by
/// /usr/bin/python3 or the given `python`, e.g. the test venv's, with `--port N` and the given
/// arguments) on a free port, and waits until it accepts connections. Retries on a port race;
/// stops early when `hopeless` says the output shows a retry cannot help (a missing module).
enum PythonServer {
    static let python = "/usr/bin/python3"

    static func script(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// `accepts` tells when the server listens (default: a connection to 127.0.0.1:port succeeds).
    static func launch(_ script: URL, arguments: [String] = [], output: URL, what: String,
                       python: String = python, environment: [String: String] = [:], timeout: TimeInterval = 10,
                       hopeless: (String) -> Bool = { _ in false },
                       accepts: (UInt16) -> Bool = { Sockets.acceptsConnections(port: $0) }) throws -> (ChildProcess, UInt16) {
        let fm = FileManager.default
        guard fm.isExecutableFile(atPath: python) else { throw HarnessError("\(python) not found") }
        guard fm.fileExists(atPath: script.path) else { throw HarnessError("\(what) script missing: \(script.path)") }
        var lastOutput = ""
        for _ in 0..<5 {
            let port = try Sockets.freeTCPPort()
            let process = try ChildProcess(
                executable: URL(fileURLWithPath: python),
                arguments: ["-u", script.path, "--port", String(port)] + arguments,
                stdoutURL: output, stderrURL: output, append: true, environment: environment)
            let up = poll(timeout: timeout) { !process.isRunning || accepts(port) }
            if up && process.isRunning { return (process, port) }
            process.stop()
            lastOutput = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if hopeless(lastOutput) { break }
        }
        throw HarnessError("\(what) did not start: \(lastOutput.suffix(2000))")
    }
}
