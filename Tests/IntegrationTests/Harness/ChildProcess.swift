import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error raised by the harness itself; XCTest reports its description when a test throws it.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Outcome of a short-lived command.
struct CommandResult {
    let command: String
    /// The output as UTF-8 (a byte that is not UTF-8 shows as U+FFFD); `…Bytes` as written.
    let stdout: String
    let stderr: String
    /// Exit status, or the signal number when the process was killed by a signal.
    let exitCode: Int32
    let timedOut: Bool
    var stdoutBytes: [UInt8] = []
    var stderrBytes: [UInt8] = []

    var trimmedStdout: String { stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
    var trimmedStderr: String { stderr.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Human-readable summary for failure messages.
    var summary: String {
        "`\(command)` -> exit \(exitCode)\(timedOut ? " (TIMED OUT)" : "")\n"
            + "stdout: \(trimmedStdout)\nstderr: \(trimmedStderr)"
    }
}

/// Environment for every child process: the caller's, minus anything that would send
/// localhost traffic through a proxy or point the daemon at a foreign state directory, and
/// minus every `AWS_*` variable (the developer's own credentials, profile, region or endpoint
/// never reach a test's daemon or boto3; a test passes the S3 server's own explicitly).
enum ChildEnvironment {
    static var sanitized: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                    "TRANSFERD_STATE_DIR", "TRANSFERD_SOCKET"] {
            env.removeValue(forKey: key)
        }
        for key in env.keys where key.hasPrefix("AWS_") { env.removeValue(forKey: key) }
        env["NO_PROXY"] = "127.0.0.1,localhost"
        env["no_proxy"] = "127.0.0.1,localhost"
        return env
    }
}

/// A child process whose stdout and stderr go to files (never pipes, so a chatty child
/// can not block on a full pipe buffer). Exit is observed through the termination handler.
final class ChildProcess {
    let name: String
    private let process = Process()
    private let exited = DispatchGroup()

    /// Launches `executable`. When `stdoutURL == stderrURL` both streams share one file.
    /// `append` keeps existing content (used for the daemon log across restarts); `environment`
    /// is set on top of the sanitized one.
    init(executable: URL, arguments: [String], stdoutURL: URL, stderrURL: URL, append: Bool = false,
         environment: [String: String] = [:]) throws {
        name = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        let out = try Self.openForWriting(stdoutURL, append: append)
        let err = stderrURL == stdoutURL ? out : try Self.openForWriting(stderrURL, append: append)
        defer {
            try? out.close()
            if err !== out { try? err.close() }
        }
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ChildEnvironment.sanitized.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let group = exited
        group.enter()
        process.terminationHandler = { _ in group.leave() }
        do {
            try process.run()
        } catch {
            group.leave()
            throw HarnessError("cannot launch \(executable.path): \(error)")
        }
    }

    private static func openForWriting(_ url: URL, append: Bool) throws -> FileHandle {
        let fm = FileManager.default
        if !append || !fm.fileExists(atPath: url.path) {
            guard fm.createFile(atPath: url.path, contents: nil) else {
                throw HarnessError("cannot create \(url.path)")
            }
        }
        let handle = try FileHandle(forWritingTo: url)
        if append { try handle.seekToEnd() }
        return handle
    }

    var pid: Int32 { process.processIdentifier }

    var isRunning: Bool { exited.wait(timeout: .now()) == .timedOut }

    /// Waits up to `timeout` seconds; returns the exit status (or signal number), nil on timeout.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
        return process.terminationStatus
    }

    /// True when the process ended because of a signal rather than by exiting.
    var wasSignalled: Bool { !isRunning && process.terminationReason == .uncaughtSignal }

    func send(signal: Int32) {
        if isRunning { _ = kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL if it is still alive after `grace` seconds. Always reaps.
    func stop(grace: TimeInterval = 5) {
        guard isRunning else { return }
        send(signal: SIGTERM)
        if waitForExit(timeout: grace) == nil {
            send(signal: SIGKILL)
            _ = waitForExit(timeout: 10)
        }
    }
}

/// Runs short-lived commands with a timeout, capturing output through scratch files.
final class CommandRunner {
    private let scratch: URL
    private var counter = 0

    init(scratch: URL) throws {
        self.scratch = scratch
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    /// `environment` is set on top of the sanitized one (ChildEnvironment), for this command only.
    func run(_ executable: URL, _ arguments: [String], timeout: TimeInterval,
             environment: [String: String] = [:]) -> CommandResult {
        counter += 1
        let outURL = scratch.appendingPathComponent("\(counter).out")
        let errURL = scratch.appendingPathComponent("\(counter).err")
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let command = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        let child: ChildProcess
        do {
            child = try ChildProcess(executable: executable, arguments: arguments, stdoutURL: outURL, stderrURL: errURL,
                                     environment: environment)
        } catch {
            return CommandResult(command: command, stdout: "", stderr: "\(error)", exitCode: -1, timedOut: false)
        }
        var status = child.waitForExit(timeout: timeout)
        let timedOut = status == nil
        if timedOut {
            child.send(signal: SIGKILL)
            status = child.waitForExit(timeout: 10)
        }
        let stdout = [UInt8]((try? Data(contentsOf: outURL)) ?? Data())
        let stderr = [UInt8]((try? Data(contentsOf: errURL)) ?? Data())
        return CommandResult(
            command: command,
            stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self),
            exitCode: timedOut ? -1 : (status ?? -1),
            timedOut: timedOut,
            stdoutBytes: stdout,
            stderrBytes: stderr)
    }
}

/// Polls `condition` every `interval` seconds until it holds or `timeout` expires.
/// Returns whether it held. This is the only way the tests wait for anything.
@discardableResult
func poll(timeout: TimeInterval, interval: TimeInterval = 0.05, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        Thread.sleep(forTimeInterval: interval)
    }
}
