import Foundation

/// A job as printed by `transferctl show --json` / `list --json`.
typealias JobJSON = [String: Any]

extension Dictionary where Key == String, Value == Any {
    var id: Int? { jsonInt(self["id"]) }
    var state: String? { self["state"] as? String }
    var bytesDone: Int? { jsonInt(self["bytesDone"]) }
    var bytesTotal: Int? { jsonInt(self["bytesTotal"]) }
    var httpStatus: Int? { jsonInt(self["httpStatus"]) }
    var attempts: Int? { jsonInt(self["attempts"]) }
    var errorObject: [String: Any]? { self["error"] as? [String: Any] }
    var errorCode: String? { errorObject?["code"] as? String }
    var errorMessage: String? { errorObject?["message"] as? String }
    /// `show --json` only: one entry per HTTP attempt
    /// (`number, startedAt, endedAt, httpStatus, error, bytes, rangeStart`).
    var attemptLog: [[String: Any]] { self["attemptLog"] as? [[String: Any]] ?? [] }

    /// Compact JSON text for failure messages.
    var jsonText: String {
        guard let data = try? JSONSerialization.data(withJSONObject: self, options: [.sortedKeys]) else {
            return "\(self)"
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Integer from a JSONSerialization value (NSNumber on Linux), nil for null/absent.
func jsonInt(_ value: Any?) -> Int? {
    switch value {
    case let v as Int: return v
    case let v as NSNumber: return v.intValue
    case let v as Double: return Int(v)
    default: return nil
    }
}

/// Runs `transferctl` against one state directory.
final class CLI {
    let binaries: Binaries
    let stateDir: URL
    let runner: CommandRunner

    init(binaries: Binaries, stateDir: URL, scratch: URL) throws {
        self.binaries = binaries
        self.stateDir = stateDir
        runner = try CommandRunner(scratch: scratch)
    }

    /// `transferctl --state-dir DIR ARGS...`
    func run(_ arguments: [String], timeout: TimeInterval = 20) -> CommandResult {
        runner.run(binaries.transferctl, ["--state-dir", stateDir.path] + arguments, timeout: timeout)
    }

    /// `transferctl --state-dir DIR ARGS...` with arguments that are bytes, not necessarily
    /// UTF-8 (Foundation would send them as UTF-8): `/bin/sh`'s printf makes each one.
    func run(rawArguments: [[UInt8]], timeout: TimeInterval = 20) -> CommandResult {
        let words = ([Array(binaries.transferctl.path.utf8), Array("--state-dir".utf8), Array(stateDir.path.utf8)] + rawArguments)
            .map { bytes in "\"$(printf '" + bytes.map { "\\" + String($0, radix: 8) }.joined() + "')\"" }
        return runner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "exec " + words.joined(separator: " ")], timeout: timeout)
    }

    /// Runs with `--json` and parses stdout; throws unless the exit code is 0.
    func json(_ arguments: [String], timeout: TimeInterval = 20) throws -> Any {
        let result = run(["--json"] + arguments, timeout: timeout)
        guard result.exitCode == 0 else { throw HarnessError("command failed: \(result.summary)") }
        guard let data = result.trimmedStdout.data(using: .utf8),
              let value = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        else { throw HarnessError("stdout is not JSON: \(result.summary)") }
        return value
    }

    /// Queues a download and returns the new job id (human output: the id alone on a line).
    func download(_ url: String, to destination: URL, _ options: [String] = []) throws -> Int {
        let result = run(["download", url, "-o", destination.path] + options)
        guard result.exitCode == 0 else { throw HarnessError("download failed: \(result.summary)") }
        guard let line = result.trimmedStdout.split(separator: "\n").last,
              let id = Int(line.trimmingCharacters(in: .whitespaces))
        else { throw HarnessError("download did not print a job id: \(result.summary)") }
        return id
    }

    /// `show ID --json`
    func job(_ id: Int) throws -> JobJSON {
        guard let job = try json(["show", String(id)]) as? JobJSON else {
            throw HarnessError("show \(id) --json did not print an object")
        }
        return job
    }

    /// `list --json`
    func jobs() throws -> [JobJSON] {
        guard let jobs = try json(["list"]) as? [JobJSON] else {
            throw HarnessError("list --json did not print an array")
        }
        return jobs
    }

    /// Polls `show ID --json` every 50 ms until `predicate` holds; throws with the last
    /// job JSON when `timeout` expires.
    @discardableResult
    func awaitJob(_ id: Int, _ what: String, timeout: TimeInterval = 20,
                  until predicate: (JobJSON) -> Bool) throws -> JobJSON {
        try awaitJSON("job \(id)", what, timeout: timeout, interval: 0.05, fetch: { try job(id) }, until: predicate)
    }

    /// Polls `fetch` until `predicate` holds; throws with the last object (and the last error)
    /// when `timeout` expires.
    func awaitJSON(_ subject: String, _ what: String, timeout: TimeInterval, interval: TimeInterval,
                   fetch: () throws -> [String: Any], until predicate: ([String: Any]) -> Bool) throws -> [String: Any] {
        var last: [String: Any] = [:]
        var lastError: Error?
        let held = poll(timeout: timeout, interval: interval) {
            do {
                last = try fetch()
                lastError = nil
                return predicate(last)
            } catch {
                lastError = error
                return false
            }
        }
        guard held else {
            throw HarnessError("\(subject): timed out after \(timeout)s waiting for \(what); last: "
                + "\(last.jsonText)\(lastError.map { "; last error: \($0)" } ?? "")")
        }
        return last
    }

    @discardableResult
    func awaitState(_ id: Int, _ state: String, timeout: TimeInterval = 20) throws -> JobJSON {
        try awaitJob(id, "state \(state)", timeout: timeout) { $0.state == state }
    }

    /// `wait ID... --timeout T`, with a process timeout a little above T.
    func wait(_ ids: [Int], timeout: Int = 25) -> CommandResult {
        run(["wait"] + ids.map(String.init) + ["--timeout", String(timeout)], timeout: TimeInterval(timeout + 10))
    }

    /// `resume-data ID` parsed as JSON.
    func resumeData(_ id: Int) throws -> [String: Any] {
        let result = run(["resume-data", String(id)])
        guard result.exitCode == 0, let data = result.trimmedStdout.data(using: .utf8),
              let doc = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw HarnessError("resume-data \(id) failed or is not a JSON object: \(result.summary)") }
        return doc
    }

    func sha256(of url: URL) throws -> String { try Files.sha256(of: url, using: runner) }
}
