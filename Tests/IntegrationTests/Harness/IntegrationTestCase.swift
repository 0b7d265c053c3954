import Foundation
import XCTest

/// Base class: every test gets its own temp directory, nginx, state directory, running
/// daemon and CLI, all torn down afterwards. On failure the directory is kept and the
/// daemon log and access log are printed.
class IntegrationTestCase: XCTestCase {
    /// Rate of nginx's `/slow/` locations; subclasses override to change pace.
    class var slowRate: String { "512k" }
    /// Extra `transferd` options for the daemon every test starts with.
    class var daemonArguments: [String] { [] }
    /// Extra environment for that daemon (e.g. `TZ`).
    class var daemonEnvironment: [String: String] { [:] }

    /// Environment for the test's daemon on top of `daemonEnvironment`, asked for in setUp once
    /// `workDir` exists and before the daemon starts: a subclass starts there the server whose
    /// credentials only the daemon must get (S3TestCase). `restartDaemon` keeps it.
    func prepareDaemonEnvironment() throws -> [String: String] { [:] }
    /// What `prepareDaemonEnvironment` returned (or `restartDaemon(environment:)` set).
    private(set) var extraDaemonEnvironment: [String: String] = [:]

    private(set) var workDir: URL!
    private(set) var binaries: Binaries!
    private(set) var nginx: NginxServer!
    private(set) var daemon: Daemon!
    private(set) var cli: CLI!
    /// Destination directory for downloads (fresh and empty per test).
    private(set) var downloads: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        binaries = try Binaries.locate()
        workDir = try TempDirectory.make()
        let fm = FileManager.default
        downloads = workDir.appendingPathComponent("downloads")
        try fm.createDirectory(at: downloads, withIntermediateDirectories: true)

        nginx = try NginxServer(directory: workDir.appendingPathComponent("nginx"), slowRate: Self.slowRate)
        try nginx.start()

        extraDaemonEnvironment = try prepareDaemonEnvironment()
        let stateDir = workDir.appendingPathComponent("state")
        cli = try CLI(binaries: binaries, stateDir: stateDir, scratch: workDir.appendingPathComponent("cli"))
        daemon = Daemon(binaries: binaries, stateDir: stateDir,
                        logURL: workDir.appendingPathComponent("transferd.log"), cli: cli,
                        extraArguments: Self.daemonArguments,
                        environment: Self.daemonEnvironment.merging(extraDaemonEnvironment) { $1 })
        try daemon.start()
    }

    override func tearDownWithError() throws {
        let daemonStatus = daemon?.statusDescription ?? "none"
        daemon?.stop()
        nginx?.stop()
        if let workDir {
            // `hasSucceeded` is false until the run stops (after tearDown), so count failures.
            if let run = testRun, run.totalFailureCount > 0 {
                print("""
                ---- \(name): kept \(workDir.path)
                ---- transferd at teardown: \(daemonStatus); log (tail):
                \(daemon?.logTail() ?? "")
                ---- nginx access log:
                \(nginx?.describeLog() ?? "")
                ----
                """)
            } else {
                try? FileManager.default.removeItem(at: workDir)
            }
        }
        try super.tearDownWithError()
    }

    // MARK: helpers shared by the tests

    /// Stops the test's daemon and starts it again on the same state directory and log, with
    /// `arguments` and, when given, under RLIMIT_NOFILE `fileLimit` or through `launcher`, and
    /// with `environment` instead of the extra environment it had (e.g. other credentials).
    func restartDaemon(arguments: [String] = daemonArguments, fileLimit: (soft: Int, hard: Int)? = nil,
                       launcher: [String] = [], environment: [String: String]? = nil) throws {
        daemon.stop()
        if let environment { extraDaemonEnvironment = environment }
        daemon = Daemon(binaries: binaries, stateDir: daemon.stateDir, logURL: daemon.logURL, cli: cli,
                        extraArguments: arguments,
                        environment: Self.daemonEnvironment.merging(extraDaemonEnvironment) { $1 },
                        fileLimit: fileLimit, launcher: launcher)
        try daemon.start()
    }

    /// A destination path in the per-test downloads directory.
    func destination(_ name: String) -> URL { downloads.appendingPathComponent(name) }

    /// Creates a source file of `size` random bytes in nginx's docroot; returns its sha256.
    @discardableResult
    func makeSource(_ name: String, size: Int) throws -> String {
        try cli.sha256(of: nginx.createFile(named: name, size: size))
    }

    /// `wait ID` must exit 0 (all completed).
    func waitCompleted(_ id: Int, timeout: Int = 25) throws {
        let result = cli.wait([id], timeout: timeout)
        guard result.exitCode == 0 else {
            let job = (try? cli.job(id))?.jsonText ?? "?"
            throw HarnessError("wait \(id) expected exit 0: \(result.summary)\njob: \(job)")
        }
    }

    /// The job completed, the destination is a regular file with the expected content, and
    /// nothing else (no partial file) is left next to it.
    func assertCompletedDownload(_ id: Int, at dest: URL, sha256 expected: String, size: Int,
                                 file: StaticString = #filePath, line: UInt = #line) throws {
        let job = try cli.job(id)
        XCTAssertEqual(job.state, "completed", job.jsonText, file: file, line: line)
        XCTAssertEqual(job.bytesDone, size, "bytesDone: \(job.jsonText)", file: file, line: line)
        XCTAssertTrue(Files.isRegularFile(dest), "destination is not a regular file: \(dest.path)", file: file, line: line)
        XCTAssertEqual(Files.size(dest), size, "destination size", file: file, line: line)
        XCTAssertEqual(try cli.sha256(of: dest), expected, "destination sha256", file: file, line: line)
        XCTAssertFalse(Files.exists(Files.partialPath(for: dest)), "partial file left behind", file: file, line: line)
        let dir = dest.deletingLastPathComponent()
        XCTAssertEqual(Files.contents(of: dir).filter { $0.hasPrefix(".") && $0.contains(dest.lastPathComponent) }, [],
                       "leftover hidden files next to the destination: \(Files.contents(of: dir))", file: file, line: line)
    }

    /// Waits until the job is running with `bytesDone >= minBytes` and short of the total.
    @discardableResult
    func awaitProgress(_ id: Int, atLeast minBytes: Int, total: Int, timeout: TimeInterval = 20) throws -> JobJSON {
        try cli.awaitJob(id, "running with \(minBytes) <= bytesDone < \(total)", timeout: timeout) { job in
            guard job.state == "running", let done = job.bytesDone else { return false }
            return done >= minBytes && done < total
        }
    }

    /// Waits until the job has moved `minBytes`, pauses it and waits until it is paused.
    @discardableResult
    func pauseAfterProgress(_ id: Int, atLeast minBytes: Int, total: Int,
                            file: StaticString = #filePath, line: UInt = #line) throws -> JobJSON {
        try awaitProgress(id, atLeast: minBytes, total: total)
        let pause = cli.run(["pause", String(id)])
        XCTAssertEqual(pause.exitCode, 0, pause.summary, file: file, line: line)
        return try cli.awaitState(id, "paused", timeout: 5)
    }

    /// Errors must be one line a user can act on.
    func assertOneLineMessage(_ text: String, _ context: String,
                              file: StaticString = #filePath, line: UInt = #line) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertFalse(trimmed.isEmpty, "\(context): expected a message, got none", file: file, line: line)
        XCTAssertFalse(trimmed.contains("\n"), "\(context): expected one line, got:\n\(trimmed)", file: file, line: line)
    }
}

let KiB = 1024
let MiB = 1024 * 1024
