import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real `transferd`, running in the foreground on a temporary state directory.
/// stdout and stderr go to one log file that survives restarts.
final class Daemon {
    let binaries: Binaries
    let stateDir: URL
    let logURL: URL
    let arguments: [String]
    /// Set on top of the test's own environment (e.g. `TZ`).
    let environment: [String: String]
    /// RLIMIT_NOFILE to start under (`prlimit --nofile=SOFT:HARD`); nil inherits the test's.
    let fileLimit: (soft: Int, hard: Int)?
    /// A program (and its arguments) that sets things up and execs the transferd path and
    /// arguments that follow them, as the same process (socket activation's helper).
    let launcher: [String]
    private let cli: CLI
    private(set) var child: ChildProcess?

    init(binaries: Binaries, stateDir: URL, logURL: URL, cli: CLI, extraArguments: [String] = [],
         environment: [String: String] = [:], fileLimit: (soft: Int, hard: Int)? = nil, launcher: [String] = []) {
        self.fileLimit = fileLimit
        self.launcher = launcher
        self.binaries = binaries
        self.stateDir = stateDir
        self.logURL = logURL
        self.cli = cli
        // TRANSFERD_TEST_CLOCK=INSTANT starts every test daemon's clock there (`--test-clock`): the
        // suite runs on a chosen day and time (a weekend, a midnight) whatever the machine's clock
        // says. A test's own --test-clock, later in the arguments, wins.
        let clock = ProcessInfo.processInfo.environment["TRANSFERD_TEST_CLOCK"].map { ["--test-clock", $0] } ?? []
        arguments = ["--state-dir", stateDir.path, "--log-level", "debug"] + clock + extraArguments
        self.environment = environment
    }

    var socketPath: String { stateDir.appendingPathComponent("transferd.sock").path }

    var isRunning: Bool { child?.isRunning ?? false }

    /// Launches the daemon and waits (deadline 15 s) until `transferctl stats` exits 0.
    func start() throws {
        guard !isRunning else { throw HarnessError("daemon already running") }
        // prlimit sets the limit on itself and execs transferd: the same process.
        var (executable, launchArguments) = fileLimit.map { limit in
            (URL(fileURLWithPath: "/usr/bin/prlimit"),
             ["--nofile=\(limit.soft):\(limit.hard)", "--", binaries.transferd.path] + arguments)
        } ?? (binaries.transferd, arguments)
        if let program = launcher.first {
            launchArguments = Array(launcher.dropFirst()) + [executable.path] + launchArguments
            executable = URL(fileURLWithPath: program)
        }
        let process = try ChildProcess(executable: executable, arguments: launchArguments,
                                       stdoutURL: logURL, stderrURL: logURL, append: true, environment: environment)
        child = process
        var lastStats: CommandResult?
        let ready = poll(timeout: 15) {
            guard process.isRunning else { return true }
            let stats = cli.run(["stats"], timeout: 5)
            lastStats = stats
            return stats.exitCode == 0
        }
        if !process.isRunning {
            throw HarnessError("transferd exited during startup with status \(process.waitForExit(timeout: 0) ?? -1); "
                + "log:\n\(logTail())")
        }
        if !ready {
            throw HarnessError("transferd not ready within 15 s; last stats: \(lastStats?.summary ?? "none"); "
                + "log:\n\(logTail())")
        }
    }

    /// SIGKILL and reap: simulates a crash.
    func kill9() {
        guard let child else { return }
        child.send(signal: SIGKILL)
        _ = child.waitForExit(timeout: 10)
    }

    /// SIGTERM (or `signal`), and assert the daemon exits 0 within `timeout` seconds (the
    /// contract says 5). A daemon that overstays is killed so the test can go on.
    /// Returns whether it exited 0.
    @discardableResult
    func terminate(signal: Int32 = SIGTERM, timeout: TimeInterval = 5,
                   file: StaticString = #filePath, line: UInt = #line) -> Bool {
        guard let child, child.isRunning else {
            XCTFail("terminate(): daemon is not running", file: file, line: line)
            return false
        }
        child.send(signal: signal)
        guard let status = child.waitForExit(timeout: timeout) else {
            kill9()
            XCTFail("transferd did not exit within \(timeout) s of signal \(signal); log:\n\(logTail())", file: file, line: line)
            return false
        }
        let exitedCleanly = !child.wasSignalled && status == 0
        XCTAssertTrue(exitedCleanly, "transferd after signal \(signal): \(child.wasSignalled ? "killed by signal" : "exit") "
            + "\(status); log:\n\(logTail())", file: file, line: line)
        return exitedCleanly
    }

    /// kill -9 (if still running) and start again, waiting until ready.
    func restart() throws {
        kill9()
        try start()
    }

    /// Cleanup: SIGTERM with a 5 s grace period, then SIGKILL.
    func stop() {
        child?.stop(grace: 5)
    }

    /// Resident memory in MiB (VmRSS in /proc/PID/status), nil when not running.
    var residentMiB: Int? {
        guard let child, child.isRunning,
              let status = try? String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }

    /// Descriptors the daemon has open, nil when not running.
    var openDescriptors: Int? {
        guard let child, child.isRunning else { return nil }
        return (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/fd"))?.count
    }

    /// The `Max open files` line of /proc/PID/limits: (soft, hard).
    var fileLimits: (soft: Int, hard: Int)? {
        guard let child, child.isRunning,
              let limits = try? String(contentsOfFile: "/proc/\(child.pid)/limits", encoding: .utf8),
              let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        let numbers = line.split(separator: " ").compactMap { Int($0) }
        return numbers.count >= 2 ? (numbers[0], numbers[1]) : nil
    }

    /// For diagnostics: running, or how it ended.
    var statusDescription: String {
        guard let child else { return "never started" }
        if child.isRunning { return "running (pid \(child.pid))" }
        let status = child.waitForExit(timeout: 0) ?? -1
        return child.wasSignalled ? "killed by signal \(status)" : "exited with status \(status)"
    }

    func logTail(lines: Int = 80) -> String {
        guard let text = try? String(contentsOf: logURL, encoding: .utf8) else { return "(no daemon log)" }
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}
